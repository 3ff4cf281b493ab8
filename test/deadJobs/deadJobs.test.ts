import { describe, expect, it } from 'vitest';
import { type DeadJob, defineJob } from '../../src/index.ts';
import { countRows, HOUR, insertJob, type JobState, MINUTE } from '../helpers/factory.ts';
import { jsonLine, runCli } from '../helpers/runCli.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { recordEvents, withWorker } from '../helpers/workerHarness.ts';

/**
 * README "Dead jobs": list with filters and paging; re-drive into the live queue in bounded
 * batches (a new job, due now, retry_times 0, last error kept, no idempotency key; the dead row
 * stays as history); purge in batches; the same through `sluice dead list|redrive|purge`.
 */
const db = useTestDatabase('sem_dead_jobs');

interface Dying extends JobState {
  /** How long ago it died. @defaultValue 0 */
  failedAgoMs?: number;
}

/**
 * Puts a job into dead_jobs as a worker would have (its id is a real job id from the jobs
 * table's sequence), failed `failedAgoMs` ago on the DB clock. Returns its id.
 */
async function insertDead(state: Dying = {}): Promise<number> {
  const id = await insertJob(db, {
    retryTimes: 4,
    maxRetries: 3,
    lastError: `Error: job ${state.name ?? 'work'} kept failing`,
    ...state,
  });
  await db.query(
    `INSERT INTO sluice_dead_jobs (id, queue, name, payload, priority, retry_times, max_retries, batch_id, idempotency_key, last_error, created_at, failed_at)
     SELECT id, queue, name, payload, priority, retry_times, max_retries, batch_id, idempotency_key, last_error, created_at,
            NOW(3) - INTERVAL ? MICROSECOND
     FROM sluice_jobs WHERE id = ?`,
    [Math.round((state.failedAgoMs ?? 0) * 1000), id],
  );
  await db.query('DELETE FROM sluice_jobs WHERE id = ?', [id]);
  return id;
}

const ids = (jobs: readonly DeadJob[]) => jobs.map((j) => j.id);

describe('deadJobs.list', () => {
  it('filters by queue, name, age and ids, combined with AND', async () => {
    const mailOld = await insertDead({ queue: 'mail', name: 'send', failedAgoMs: 2 * HOUR, payload: { to: 'a' } });
    const mailNew = await insertDead({ queue: 'mail', name: 'send', failedAgoMs: MINUTE });
    const mailOther = await insertDead({ queue: 'mail', name: 'bounce', failedAgoMs: 3 * HOUR });
    const report = await insertDead({ queue: 'reports', name: 'send', failedAgoMs: 10 * MINUTE });
    const list = db.sluice.deadJobs.list;

    expect(ids(await list())).toEqual([mailOld, mailNew, mailOther, report]);
    expect(ids(await list({ queue: 'mail' }))).toEqual([mailOld, mailNew, mailOther]);
    expect(ids(await list({ name: 'send' }))).toEqual([mailOld, mailNew, report]);
    expect(ids(await list({ queue: 'mail', name: 'send' }))).toEqual([mailOld, mailNew]);
    expect(ids(await list({ olderThanMs: HOUR }))).toEqual([mailOld, mailOther]);
    expect(ids(await list({ newerThanMs: 30 * MINUTE }))).toEqual([mailNew, report]);
    expect(ids(await list({ olderThanMs: 5 * MINUTE, newerThanMs: 150 * MINUTE }))).toEqual([mailOld, report]);
    expect(ids(await list({ ids: [report, mailNew, 999_999] }))).toEqual([mailNew, report]);
    expect(ids(await list({ ids: [] }))).toEqual([]);
    expect(ids(await list({ queue: 'nope' }))).toEqual([]);

    const [first] = await list({ ids: [mailOld] });
    expect(first).toEqual({
      id: mailOld,
      queue: 'mail',
      name: 'send',
      payload: { to: 'a' },
      payloadRefused: null,
      priority: 0,
      retryTimes: 4,
      maxRetries: 3,
      batchId: null,
      idempotencyKey: null,
      lastError: 'Error: job send kept failing',
      createdAt: expect.any(Date),
      failedAt: expect.any(Date),
    });
  });

  it('pages by afterId and limit, oldest id first', async () => {
    const all: number[] = [];
    for (let i = 0; i < 5; i++) all.push(await insertDead({ payload: { i } }));
    const pages: number[][] = [];
    let afterId = 0;
    for (;;) {
      const page = ids(await db.sluice.deadJobs.list({}, { afterId, limit: 2 }));
      if (page.length === 0) break;
      pages.push(page);
      afterId = page[page.length - 1] as number;
    }
    expect(pages).toEqual([all.slice(0, 2), all.slice(2, 4), all.slice(4)]);
    expect(ids(await db.sluice.deadJobs.list({}, { afterId: all[1], limit: 100 }))).toEqual(all.slice(2));
  });

  it('refuses a page larger than 1,000 or a bad cursor, at the call', async () => {
    await insertDead({ payload: {} });
    await expect(db.sluice.deadJobs.list({}, { limit: 1_001 })).rejects.toThrow(
      /option limit must be an integer in \[1, 1000\]/,
    );
    await expect(db.sluice.deadJobs.list({}, { limit: 0 })).rejects.toThrow(/limit/);
    await expect(db.sluice.deadJobs.list({}, { afterId: -1 })).rejects.toThrow(/option afterId must be an integer/);
    expect(await db.sluice.deadJobs.list({}, { limit: 1_000 })).toHaveLength(1);
  });
});

describe('deadJobs.redrive', () => {
  it('puts every dead job back as a new live job in batches, keeping the dead rows as history', async () => {
    const dead: number[] = [];
    for (let i = 0; i < 5; i++) {
      dead.push(
        await insertDead({
          queue: i < 3 ? 'mail' : 'sms',
          name: 'send',
          priority: i,
          payload: { i },
          idempotencyKey: `key-${i}`,
          failedAgoMs: HOUR,
        }),
      );
    }
    const progress: number[] = [];
    expect(await db.sluice.deadJobs.redrive({}, { batchSize: 2, onProgress: (n) => progress.push(n) })).toEqual({
      redriven: 5,
    });
    expect(progress).toEqual([2, 4, 5]);

    const live = await db.query<Record<string, unknown>>(
      `SELECT id, queue, name, payload, priority, lock_id, retry_times, max_retries, idempotency_key, last_error, run_at <= NOW(3) AS due
       FROM sluice_jobs ORDER BY id`,
    );
    expect(live).toHaveLength(5);
    const history = await db.query<{
      id: number;
      redriven_at: Date | null;
      redriven_as: number | null;
      payload: string;
      last_error: string;
    }>('SELECT id, redriven_at, redriven_as, payload, last_error FROM sluice_dead_jobs ORDER BY id');
    expect(history.map((h) => Number(h.id))).toEqual(dead);
    for (const [i, h] of history.entries()) {
      expect(h.redriven_at).toBeInstanceOf(Date);
      const job = live.find((j) => Number(j.id) === Number(h.redriven_as));
      expect(job, `the new job of dead job ${h.id}`).toBeDefined();
      expect(job).toMatchObject({
        queue: i < 3 ? 'mail' : 'sms',
        name: 'send',
        priority: i,
        lock_id: '',
        retry_times: 0,
        max_retries: 3,
        idempotency_key: null,
        last_error: h.last_error,
        due: 1,
      });
      expect(JSON.parse(job?.payload as string)).toEqual({ i });
      expect(dead).not.toContain(Number(job?.id));
    }
    // Re-driven rows are history now: not listed, not re-driven twice.
    expect(await db.sluice.deadJobs.list()).toEqual([]);
    expect(ids(await db.sluice.deadJobs.list({ includeRedriven: true }))).toEqual(dead);
    expect(await db.sluice.deadJobs.redrive()).toEqual({ redriven: 0 });
    expect(await countRows(db, 'sluice_jobs')).toBe(5);
  });

  it('re-drives only what the filter matches', async () => {
    const mail = [
      await insertDead({ queue: 'mail', failedAgoMs: 2 * HOUR }),
      await insertDead({ queue: 'mail', failedAgoMs: 1_000 }),
    ];
    const sms = await insertDead({ queue: 'sms', failedAgoMs: 2 * HOUR });
    expect(await db.sluice.deadJobs.redrive({ queue: 'mail', olderThanMs: HOUR })).toEqual({ redriven: 1 });
    expect(ids(await db.sluice.deadJobs.list())).toEqual([mail[1], sms]);
    expect(await db.query('SELECT queue FROM sluice_jobs')).toEqual([{ queue: 'mail' }]);
    expect(await db.sluice.deadJobs.redrive({ ids: [sms] }, { batchSize: 1 })).toEqual({ redriven: 1 });
    expect(ids(await db.sluice.deadJobs.list())).toEqual([mail[1]]);
  });

  it('a re-driven job that fails again dies again and is listed again, as a new dead job', async () => {
    const sluice = db.open();
    const events = recordEvents(sluice);
    const original = await insertDead({ name: 'flaky', payload: { n: 7 }, maxRetries: 0 });
    await sluice.deadJobs.redrive();
    const [{ redriven_as: newId } = { redriven_as: 0 }] = await db.query<{ redriven_as: number }>(
      'SELECT redriven_as FROM sluice_dead_jobs WHERE id = ?',
      [original],
    );
    const flaky = defineJob({
      name: 'flaky',
      handle: () => {
        throw new Error('still broken');
      },
    });
    await withWorker(sluice, [flaky], {}, () => waitFor(() => events['job:dead'].length === 1, { what: 'job:dead' }));
    const listed = await sluice.deadJobs.list();
    expect(listed).toEqual([
      expect.objectContaining({ id: Number(newId), name: 'flaky', payload: { n: 7 }, retryTimes: 1 }),
    ]);
    expect(listed[0]?.lastError).toContain('still broken');
    expect(ids(await sluice.deadJobs.list({ includeRedriven: true }))).toEqual([original, Number(newId)]);
  });
});

describe('deadJobs.purge', () => {
  it('deletes matching dead jobs in batches; re-driven history only with includeRedriven', async () => {
    const old = [];
    for (let i = 0; i < 5; i++) old.push(await insertDead({ queue: 'mail', failedAgoMs: 3 * HOUR }));
    const recent = await insertDead({ queue: 'mail', failedAgoMs: MINUTE });
    const other = await insertDead({ queue: 'sms', failedAgoMs: 3 * HOUR });
    const redriven = await insertDead({ queue: 'mail', failedAgoMs: 3 * HOUR });
    await db.sluice.deadJobs.redrive({ ids: [redriven] });

    expect(await db.sluice.deadJobs.purge({ queue: 'mail', olderThanMs: HOUR }, { batchSize: 2 })).toEqual({
      purged: 5,
    });
    expect(ids(await db.sluice.deadJobs.list({ includeRedriven: true }))).toEqual([recent, other, redriven]);

    expect(
      await db.sluice.deadJobs.purge({ queue: 'mail', olderThanMs: HOUR, includeRedriven: true }, { batchSize: 2 }),
    ).toEqual({ purged: 1 });
    expect(ids(await db.sluice.deadJobs.list({ includeRedriven: true }))).toEqual([recent, other]);
    expect(await db.sluice.deadJobs.purge({ ids: [other] })).toEqual({ purged: 1 });
    expect(ids(await db.sluice.deadJobs.list({ includeRedriven: true }))).toEqual([recent]);
    // The re-driven job itself lives on.
    expect(await countRows(db, 'sluice_jobs')).toBe(1);
  });
});

describe('sluice dead (CLI)', () => {
  it('lists as JSON with filters, re-drives and purges, with exit codes', async () => {
    const mail = [
      await insertDead({ queue: 'mail', name: 'send', payload: { n: 1 } }),
      await insertDead({ queue: 'mail', name: 'send', payload: { n: 2 } }),
    ];
    const sms = await insertDead({ queue: 'sms', name: 'text', failedAgoMs: 2 * HOUR });
    const url = ['--url', db.url];

    // Read-only commands run side by side (each is a process start).
    const [listed, filtered, paged, table, unknown, badFlag] = await Promise.all([
      runCli(['dead', 'list', '--json', ...url]),
      runCli(['dead', 'list', '--json', '--older-than-ms', String(HOUR), ...url]),
      runCli(['dead', 'list', '--json', '--after-id', String(mail[0]), '--limit', '1', ...url]),
      runCli(['dead', 'list', '--queue', 'sms', ...url]),
      runCli(['dead', 'resurrect', ...url]),
      runCli(['dead', 'list', '--older-than-ms', 'soon', ...url]),
    ]);
    expect(listed.code, listed.stderr).toBe(0);
    const all = jsonLine<{ deadJobs: { id: number; queue: string; payload: unknown; lastError: string }[] }>(
      listed,
      'deadJobs',
    ).deadJobs;
    expect(all.map((j) => [j.id, j.queue])).toEqual([
      [mail[0], 'mail'],
      [mail[1], 'mail'],
      [sms, 'sms'],
    ]);
    expect(all[0]).toMatchObject({ payload: { n: 1 }, lastError: 'Error: job send kept failing' });

    expect(jsonLine<{ deadJobs: { id: number }[] }>(filtered, 'deadJobs').deadJobs.map((j) => j.id)).toEqual([sms]);
    expect(jsonLine<{ deadJobs: { id: number }[] }>(paged, 'deadJobs').deadJobs.map((j) => j.id)).toEqual([mail[1]]);
    expect(table.code).toBe(0);
    expect(table.stdout).toContain('text');
    expect(table.stdout).not.toContain('send');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown action "resurrect"');
    expect(badFlag.code, 'a malformed flag is a usage error').toBe(2);
    expect(badFlag.stderr).toContain('--older-than-ms');

    const redrive = await runCli(['dead', 'redrive', '--queue', 'mail', '--batch-size', '1', ...url]);
    expect(redrive.code, redrive.stderr).toBe(0);
    expect(jsonLine(redrive, 'redriven')).toEqual({ redriven: 2 });
    expect(redrive.stderr).toContain('redriven 2');
    expect(await db.query('SELECT queue, name, retry_times FROM sluice_jobs ORDER BY id')).toEqual([
      { queue: 'mail', name: 'send', retry_times: 0 },
      { queue: 'mail', name: 'send', retry_times: 0 },
    ]);
    expect(await countRows(db, 'sluice_dead_jobs', 'redriven_at IS NOT NULL')).toBe(2);

    const purge = await runCli(['dead', 'purge', '--id', `${sms},${mail[0]}`, ...url]);
    expect(purge.code, purge.stderr).toBe(0);
    // mail[0] was re-driven: kept unless --include-redriven.
    expect(jsonLine(purge, 'purged')).toEqual({ purged: 1 });
    const unfiltered = await runCli(['dead', 'purge', '--include-redriven', ...url]);
    expect(unfiltered.code, 'purge without a filter asks for --all').toBe(2);
    expect(unfiltered.stderr).toContain('add --all');
    expect(await countRows(db, 'sluice_dead_jobs')).toBe(2);
    const purgeAll = await runCli(['dead', 'purge', '--all', '--include-redriven', ...url]);
    expect(jsonLine(purgeAll, 'purged')).toEqual({ purged: 2 });
    expect(await countRows(db, 'sluice_dead_jobs')).toBe(0);
    expect(await countRows(db, 'sluice_jobs')).toBe(2);
  });
});
