import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFixtureTables } from '../fixtures/fixtureTables.ts';
import { jsonLine, runCli } from '../helpers/runCli.ts';
import { type SluiceProcess, spawnSluice, spawnWorker } from '../helpers/spawnSluice.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';

/**
 * A worker without the code of a job: an empty jobs folder (a `dist/jobs` that tsc never wrote)
 * refuses to start; a worker whose folder lacks a job name (an old worker during a rolling
 * deploy) gives that job's jobs back without spending an attempt, `sluice stats` says no running
 * worker knows it, and a worker that knows it runs them once it starts.
 */
const db = useTestDatabase('process_unknown_jobs');
const QUEUE = 'unknown';
const JOBS = 5;

/** An app folder: empty/ (nothing), typesOnly/ (what a failed build leaves), other/ (one job, `other`). */
const app = mkdtempSync(join(tmpdir(), 'sluice-unknown-'));
for (const dir of ['empty', 'typesOnly', 'other']) mkdirSync(join(app, dir));
writeFileSync(join(app, 'typesOnly', 'record.d.ts'), 'export {};\n');
writeFileSync(join(app, 'typesOnly', 'README.md'), 'jobs\n');
writeFileSync(join(app, 'other', 'other.mjs'), `export default { name: 'other', handle() {} };\n`);
afterAll(() => rmSync(app, { recursive: true, force: true }));
beforeAll(() => createFixtureTables(db));

async function count(sql: string): Promise<number> {
  const [row] = await db.query<{ n: number }>(sql);
  return Number(row?.n);
}

/** The process's exit, or 'started' if it logged worker:started first. */
async function startOrExit(p: SluiceProcess): Promise<'started' | number | null> {
  return Promise.race([
    p.exited.then((e) => e.code),
    p
      .waitForLine((l) => l.event === 'worker:started', 60_000, 'worker:started')
      .then(
        () => 'started' as const,
        () => p.exited.then((e) => e.code),
      ),
  ]);
}

async function unknownJobs(): Promise<unknown[]> {
  const stats = await runCli(['stats', '--json', '--url', db.url]);
  expect(stats.code, stats.stderr).toBe(0);
  return jsonLine<{ unknownJobs: unknown[] }>(stats, 'unknownJobs').unknownJobs;
}

describe('a worker without the code of a job', () => {
  it('refuses to start with no job files, naming the folder and what it holds', async () => {
    const empty = spawnSluice('work', ['--url', db.url, '--jobs', 'empty', '--queues', QUEUE], { cwd: app });
    expect(await startOrExit(empty), empty.describe()).toBe(1);
    expect(empty.describe()).toContain(`${join(app, 'empty')}: has no job files`);
    expect(empty.describe()).toContain('it is empty');
    const typesOnly = spawnSluice('work', ['--url', db.url, '--jobs', 'typesOnly', '--queues', QUEUE], { cwd: app });
    expect(await startOrExit(typesOnly), typesOnly.describe()).toBe(1);
    expect(typesOnly.describe()).toContain('it holds 2 entries, none a job file: README.md, record.d.ts');
    expect(await count('SELECT COUNT(*) AS n FROM sluice_workers')).toBe(0);
  });

  it('gives back the jobs it has no handler for, uncounted, until a worker that has one runs them', async () => {
    const old = spawnSluice(
      'work',
      [
        ...['--url', db.url, '--jobs', 'other', '--queues', QUEUE],
        ...['--poll-interval-ms', '100', '--max-poll-interval-ms', '300', '--heartbeat-interval-ms', '200'],
      ],
      { cwd: app },
    );
    await old.ready;
    await db.sluice.enqueueBatch(
      Array.from({ length: JOBS }, (_, n) => ({ name: 'record', queue: QUEUE, payload: { n } })),
    );
    // Several claim rounds: every job claimed (and given back) three times over. Claimed jobs it
    // has no handler for are reported as given back (job:unknown), the others as claimed.
    const claims = () =>
      old.events('job:claimed').reduce((sum, l) => sum + Number(l.count), 0) +
      old.events('job:unknown').reduce((sum, l) => sum + (l.jobIds as number[]).length, 0);
    await waitFor(() => claims() >= 3 * JOBS, { what: `${3 * JOBS} jobs claimed by the worker without their code` });
    const rows = await db.query<{ retry_times: number; last_error: string | null }>(
      'SELECT retry_times, last_error FROM sluice_jobs ORDER BY id',
    );
    expect(rows).toEqual(Array.from({ length: JOBS }, () => ({ retry_times: 0, last_error: null })));
    expect(await count('SELECT COUNT(*) AS n FROM sluice_dead_jobs')).toBe(0);
    expect(old.events('job:failed')).toEqual([]);
    expect(old.events('job:unknown')[0]).toMatchObject({ level: 40, queue: QUEUE, names: ['record'], firstSeen: true });

    // Seen by stats once the worker's heartbeat carried it.
    await waitFor(async () => (await unknownJobs()).length > 0, { what: 'stats naming the unknown job' });
    expect(await unknownJobs()).toEqual([
      { name: 'record', queues: [QUEUE], workers: 1, givenBack: expect.any(Number) },
    ]);
    const text = await runCli(['stats', '--url', db.url]);
    expect(text.stdout).toContain(`no running worker knows job record (queue ${QUEUE}): 1 worker(s) gave back`);

    // A worker that has the job's code arrives (the old one still runs): it runs them all, once.
    const current = spawnWorker(db.url, { queues: QUEUE, pollIntervalMs: 100, heartbeatIntervalMs: 200 });
    await waitFor(async () => (await count('SELECT COUNT(*) AS n FROM sluice_jobs')) === 0, {
      what: 'the jobs run by the worker that knows them',
    });
    expect(await count('SELECT COUNT(DISTINCT job_id) AS n FROM test_effects')).toBe(JOBS);
    expect(await count('SELECT COUNT(*) AS n FROM test_effects')).toBe(JOBS);
    expect(await count('SELECT COUNT(*) AS n FROM sluice_dead_jobs')).toBe(0);
    await waitFor(async () => (await unknownJobs()).length === 0, { what: 'stats without unknown jobs' });
    for (const exit of await Promise.all([old.stop(), current.stop()])) expect(exit).toEqual({ code: 0, signal: null });
  });
});
