import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnSluice } from '../helpers/spawnSluice.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

const db = useTestDatabase('jobs_folder');

/**
 * An app folder outside the repo: jobs/ (an .mjs and a .cjs job, one recurring) and other-jobs/
 * (one .js job). Plain objects as default exports: the worker passes each through defineJob.
 */
const app = mkdtempSync(join(tmpdir(), 'sluice-app-'));
mkdirSync(join(app, 'jobs'));
mkdirSync(join(app, 'other-jobs'));
writeFileSync(join(app, 'jobs', 'welcome.mjs'), `export default { name: 'welcome', handle() {} };\n`);
writeFileSync(
  join(app, 'jobs', 'nightly.cjs'),
  `module.exports = { name: 'nightly', schedule: '0 0 3 * * *', handle() {} };\n`,
);
writeFileSync(join(app, 'other-jobs', 'other.js'), `export default { name: 'other', handle() {} };\n`);
writeFileSync(join(app, 'other-jobs', 'package.json'), '{ "type": "module" }\n');
afterAll(() => rmSync(app, { recursive: true, force: true }));

describe('the jobs folder is the app’s', () => {
  it('work --jobs DIR resolves DIR against the current folder, logs the folder and job names, and runs the app’s job', async () => {
    const worker = spawnSluice('work', ['--url', db.url, '--jobs', 'jobs', '--queues', 'app'], { cwd: app });
    const started = await worker.waitForLine((l) => l.event === 'worker:started', 30_000, 'worker:started');
    expect(started.jobsFolder).toBe(join(app, 'jobs'));
    expect(started.jobs).toEqual(['nightly', 'welcome']);
    expect(started.msg).toContain(`2 job type(s) from ${join(app, 'jobs')} (nightly, welcome)`);
    await db.sluice.enqueue({ name: 'welcome', queue: 'app', payload: { who: 'ada' } });
    await worker.waitForLine((l) => l.event === 'job:completed', 30_000, 'job:completed');
    expect((await worker.stop()).code).toBe(0);
  });

  it('SLUICE_JOBS names the folder when --jobs does not; --jobs wins over it', async () => {
    const fromEnv = spawnSluice('work', ['--url', db.url, '--queues', 'app'], {
      cwd: app,
      env: { SLUICE_JOBS: 'other-jobs' },
    });
    const started = await fromEnv.waitForLine((l) => l.event === 'worker:started', 30_000, 'worker:started');
    expect([started.jobsFolder, started.jobs]).toEqual([join(app, 'other-jobs'), ['other']]);
    const fromFlag = spawnSluice('work', ['--url', db.url, '--queues', 'app', '--jobs', 'jobs'], {
      cwd: app,
      env: { SLUICE_JOBS: 'other-jobs' },
    });
    const flagged = await fromFlag.waitForLine((l) => l.event === 'worker:started', 30_000, 'worker:started');
    expect(flagged.jobsFolder).toBe(join(app, 'jobs'));
    await Promise.all([fromEnv.stop(), fromFlag.stop()]);
  });

  it('maintenance loads ./jobs of the current folder and logs the recurring jobs it enqueues', async () => {
    const maintenance = spawnSluice('maintenance', ['--url', db.url, '--schedule', '0 0 0 1 1 *'], { cwd: app });
    const started = await maintenance.waitForLine(
      (l) => l.event === 'maintenance:started',
      30_000,
      'maintenance:started',
    );
    expect([started.jobsFolder, started.scheduled]).toEqual([join(app, 'jobs'), ['nightly']]);
    expect(started.msg).toContain(`recurring jobs: nightly from ${join(app, 'jobs')}`);
    expect((await maintenance.stop()).code).toBe(0);
  });
});
