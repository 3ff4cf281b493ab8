import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/runCli.ts';

const app = mkdtempSync(join(tmpdir(), 'sluice-init-'));
afterAll(() => rmSync(app, { recursive: true, force: true }));

/** `sluice init` (started with the real pm2 from an installed package: test/package/consumer.test.ts). */
describe('sluice init', () => {
  it('writes ecosystem.config.cjs for the app’s jobs folder, with the URL left to the environment', async () => {
    mkdirSync(join(app, 'src', 'jobs'), { recursive: true });
    const result = await runCli(['init', '--jobs', 'src/jobs', '--workers', '3', '--queues', 'mail,default'], {
      cwd: app,
      env: { MYSQL_URL: 'mysql://app:s3cret@db:3306/app' },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`wrote ${join(app, 'ecosystem.config.cjs')}: 3 workers on ./src/jobs`);
    const file = readFileSync(join(app, 'ecosystem.config.cjs'), 'utf8');
    expect(file).toContain(`path.join(__dirname, "src/jobs")`);
    expect(file).toContain(`Number(process.env.SLUICE_WORKERS || 3)`);
    expect(file).toContain(`process.env.SLUICE_QUEUES || "mail,default"`);
    expect(file).toContain("require.resolve('sluice/package.json', { paths: [__dirname] })");
    expect(file).not.toContain('s3cret');
    expect(file).not.toContain('--url');
  });

  it('refuses to overwrite the file without --force, and takes no --url', async () => {
    const again = await runCli(['init'], { cwd: app });
    expect(again.code).toBe(1);
    expect(again.stderr).toBe(`sluice init: ${join(app, 'ecosystem.config.cjs')} exists; --force overwrites it\n`);
    expect((await runCli(['init', '--force'], { cwd: app })).code).toBe(0);
    const withUrl = await runCli(['init', '--force', '--url', 'mysql://x@y/z'], { cwd: app });
    expect(withUrl.code).toBe(2);
    expect(withUrl.stderr).toContain('takes no --url');
  });
});
