import { randomBytes } from 'node:crypto';
import knexFactory from 'knex';
import { beforeAll, describe, expect, it } from 'vitest';
import { createSluice, type SluiceEventMap } from '../../src/index.ts';
import { createFixtureTables } from '../fixtures/fixtureTables.ts';
import { FIXTURE_JOBS, type SluiceProcess, spawnWorker } from '../helpers/spawnSluice.ts';
import { testLogger, useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';

/**
 * How an idle worker is woken (src/wakeups): every worker here polls once every two minutes
 * (pollIntervalMs = maxPollIntervalMs = LONG_POLL, ±25 %), so a job that runs within PICKUP_MS
 * was started by a ring — the doorbell for a worker in another process, the in-process ring for
 * one in this process — or, for a delayed job, by the worker's wake-up at the job's run_at. These
 * are not timings: without the mechanism under test each job would wait a whole poll.
 */
const db = useTestDatabase('process_wakeups');
const LONG_POLL = 120_000;
const PICKUP_MS = 20_000;

beforeAll(() => createFixtureTables(db));

async function ran(jobId: number): Promise<boolean> {
  const rows = await db.query<{ n: number }>('SELECT COUNT(*) AS n FROM test_effects WHERE job_id = ?', [jobId]);
  return Number(rows[0]?.n) === 1;
}

async function doorbells(queue: string): Promise<{ worker_id: string; connection_id: number }[]> {
  return db.query('SELECT worker_id, connection_id FROM sluice_doorbells WHERE queue = ?', [queue]);
}

/** A `sluice work` process on `queue` that polls every LONG_POLL, once its doorbell is registered. */
async function idleWorker(queue: string): Promise<SluiceProcess> {
  const worker = spawnWorker(
    db.url,
    { queues: queue, pollIntervalMs: LONG_POLL, maxPollIntervalMs: LONG_POLL },
    { logLevel: 'info' },
  );
  await worker.ready;
  await waitFor(async () => (await doorbells(queue)).length === 1, { what: 'the worker rang its doorbell in' });
  return worker;
}

async function stopped(worker: SluiceProcess): Promise<void> {
  expect(await worker.stop(), worker.describe()).toEqual({ code: 0, signal: null });
  expect(worker.lines.filter((l) => l.level >= 40)).toEqual([]);
}

describe('waking idle workers', () => {
  it('a job enqueued in another process starts at once: the doorbell rings; stop forgets it and ends its sleep', async () => {
    const worker = await idleWorker('bell');
    const [bell] = await doorbells('bell');
    for (let n = 0; n < 3; n++) {
      const { id } = await db.sluice.enqueue({ name: 'record', queue: 'bell', payload: { n } });
      await waitFor(() => ran(id), { timeoutMs: PICKUP_MS, what: `job ${id} ran` });
    }
    await stopped(worker);
    expect(await doorbells('bell')).toEqual([]);
    const sleeping = await db.query('SELECT id FROM information_schema.PROCESSLIST WHERE id = ?', [
      bell?.connection_id,
    ]);
    expect(sleeping).toEqual([]);
  }, 60_000);

  it("a worker on a pattern ('tenant-*', '*') in another process is rung by an enqueue to one of its queues", async () => {
    for (const [pattern, queue] of [
      ['tenant-*', 'tenant-42'],
      ['*', 'anything'],
    ] as const) {
      const key = `*${pattern.slice(0, -1)}`;
      const worker = spawnWorker(db.url, { queues: pattern, pollIntervalMs: LONG_POLL, maxPollIntervalMs: LONG_POLL });
      await worker.ready;
      // One row stands for the pattern's queues: '*' then its prefix (src/wakeups/patternDoorbells.ts).
      await waitFor(async () => (await doorbells(key)).length === 1, { what: `the ${pattern} doorbell rang in` });
      // Its first claims found nothing: it now sleeps a whole poll unless rung.
      await new Promise((resolve) => setTimeout(resolve, 500));
      for (let n = 0; n < 2; n++) {
        const { id } = await db.sluice.enqueue({ name: 'record', queue, payload: { n } });
        await waitFor(() => ran(id), { timeoutMs: PICKUP_MS, what: `job ${id} of ${queue} ran (${pattern})` });
      }
      await stopped(worker);
      expect(await doorbells(key)).toEqual([]);
    }
  }, 90_000);

  it('a delayed job starts at its runAt, not a poll later: the idle worker sleeps until the earliest run_at', async () => {
    // Enqueued before the worker starts: no ring tells it; its first empty poll reads the run_at.
    const { id } = await db.sluice.enqueue({ name: 'record', queue: 'later', delayMs: 4_000 });
    const worker = await idleWorker('later');
    const [due] = await db.query<{ run_at: Date }>('SELECT run_at FROM sluice_jobs WHERE id = ?', [id]);
    await waitFor(() => ran(id), { timeoutMs: PICKUP_MS, what: `delayed job ${id} ran` });
    // Its handler ran; its completion is written in the worker's next batch.
    const job = await waitFor(async () => {
      const found = await db.sluice.jobs.get(id);
      return found?.state === 'completed' ? found : undefined;
    });
    // Never before its time (both on the database clock).
    const finishedAt = job?.finishedAt as Date;
    const runAt = due?.run_at as Date;
    expect(finishedAt.getTime()).toBeGreaterThanOrEqual(runAt.getTime());
    await stopped(worker);
  }, 60_000);

  it("an enqueue inside the application's transaction rings when it commits, not before", async () => {
    const worker = await idleWorker('outbox');
    let id = 0;
    await db.sluice.knex.transaction(async (trx) => {
      id = (await db.sluice.enqueue({ name: 'record', queue: 'outbox' }, { trx })).id;
      // A ring now would find nothing to claim, and the worker would sleep a whole poll.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(await ran(id)).toBe(false);
    });
    await waitFor(() => ran(id), { timeoutMs: PICKUP_MS, what: `job ${id} ran after the commit` });
    // A rolled-back enqueue rings nobody and leaves nothing.
    await db.sluice.knex
      .transaction(async (trx) => {
        await db.sluice.enqueue({ name: 'record', queue: 'outbox' }, { trx });
        throw new Error('roll back');
      })
      .catch(() => undefined);
    await stopped(worker);
    expect(await db.query('SELECT id FROM sluice_jobs')).toEqual([]);
  }, 60_000);

  it('jobs made due by runNow, retryNow, reschedule or a re-drive ring the idle worker in another process', async () => {
    const worker = await idleWorker('moved');
    // Each job is enqueued an hour ahead. That enqueue rings the worker (its KILL goes out after
    // the enqueue returns); a second later the worker has long since found nothing due and gone
    // back to sleep for a whole poll, so only a ring of the call under test can start the job.
    const later = async () => {
      const { id } = await db.sluice.enqueue({ name: 'record', queue: 'moved', delayMs: 3_600_000 });
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      return id as number;
    };
    const delayed = await later();
    expect(await db.sluice.jobs.runNow(delayed)).toBe(1);
    await waitFor(() => ran(delayed), { timeoutMs: PICKUP_MS, what: `job ${delayed} ran after runNow` });

    const retrying = await later();
    await db.query('UPDATE sluice_jobs SET retry_times = 1 WHERE id = ?', [retrying]);
    expect(await db.sluice.jobs.retryNow(retrying)).toBe(1);
    await waitFor(() => ran(retrying), { timeoutMs: PICKUP_MS, what: `job ${retrying} ran after retryNow` });

    const moved = await later();
    expect(await db.sluice.jobs.reschedule(moved, { delayMs: 300 })).toBe(1);
    await waitFor(() => ran(moved), { timeoutMs: PICKUP_MS, what: `job ${moved} ran after reschedule` });

    // Written around sluice: nothing rings for it.
    await db.query(
      `INSERT INTO sluice_dead_jobs (id, queue, name, payload, priority, retry_times, last_error, created_at, failed_at)
       VALUES (900001, 'moved', 'record', '{}', 0, 3, 'Error: gave up', NOW(3), NOW(3))`,
    );
    expect(await db.sluice.deadJobs.redrive({ ids: [900001] })).toEqual({ redriven: 1 });
    const [again] = await db.query<{ redriven_as: number }>(
      'SELECT redriven_as FROM sluice_dead_jobs WHERE id = 900001',
    );
    await waitFor(() => ran(Number(again?.redriven_as)), { timeoutMs: PICKUP_MS, what: 'the re-driven job ran' });
    await stopped(worker);
  }, 90_000);

  it('a doorbell whose connection is gone (its worker was killed) is dropped, and the ring goes on to a live one', async () => {
    const [me] = await db.query<{ server: string; user: string }>(
      "SELECT CONCAT(@@hostname, ':', @@port) AS server, USER AS user FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()",
    );
    const gone = (workerId: string, connectionId: number) =>
      db.query(
        "INSERT INTO sluice_doorbells (queue, worker_id, server, connection_id, token, db_user, created_at) VALUES ('gone', ?, ?, ?, ?, ?, NOW(3))",
        [workerId, me?.server, connectionId, randomBytes(16).toString('hex'), me?.user],
      );
    await gone('w-dead', 4000000000);
    await db.sluice.enqueue({ name: 'record', queue: 'gone' });
    await waitFor(async () => (await doorbells('gone')).length === 0, { what: 'the stale doorbell dropped' });

    // Nine dead doorbells and one live worker: a single job rings the live one (the dead ones'
    // connections are not in the process list: they are dropped, never rung).
    const worker = await idleWorker('gone');
    for (let n = 0; n < 9; n++) await gone(`w-dead-${n}`, 4000000001 + n);
    // The enqueuing process's copy of the doorbells is kept a second: let it expire.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const { id } = await db.sluice.enqueue({ name: 'record', queue: 'gone' });
    await waitFor(() => ran(id), { timeoutMs: PICKUP_MS, what: `job ${id} ran` });
    await waitFor(async () => (await doorbells('gone')).length === 1, { what: 'the dead doorbells dropped' });
    await stopped(worker);
  }, 60_000);

  it('a worker in the enqueuing process is woken by the in-process ring (no doorbell without a URL: an app knex)', async () => {
    const knex = knexFactory({ client: 'mysql2', connection: db.url, pool: { min: 0, max: 12 } });
    const app = createSluice({ knex, logger: testLogger });
    try {
      const worker = app.worker({
        queues: ['local'],
        jobs: FIXTURE_JOBS,
        pollIntervalMs: LONG_POLL,
        maxPollIntervalMs: LONG_POLL,
      });
      await worker.start();
      // Its first poll found nothing; it now waits for the next one (two minutes) or a ring.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(await doorbells('local')).toEqual([]);
      const { id } = await app.enqueue({ name: 'record', queue: 'local' });
      await waitFor(() => ran(id), { timeoutMs: PICKUP_MS, what: `job ${id} ran` });
      await worker.stop();
    } finally {
      await app.close();
      await knex.destroy();
    }
  }, 60_000);

  it('an enqueuer of another database user does not ring the worker: it says so once and leaves the job to polling', async () => {
    const user = `sluice_ring_${randomBytes(3).toString('hex')}`;
    const password = randomBytes(9).toString('hex');
    await db.query(`CREATE USER '${user}'@'%' IDENTIFIED BY '${password}'`);
    await db.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON \`${db.name}\`.* TO '${user}'@'%'`);
    const url = new URL(db.url);
    url.username = user;
    url.password = password;
    const other = createSluice({ url: url.toString(), logger: testLogger });
    const worker = spawnWorker(db.url, { queues: 'denied', pollIntervalMs: 300, maxPollIntervalMs: 300 });
    try {
      await worker.ready;
      await waitFor(async () => (await doorbells('denied')).length === 1, { what: 'the worker rang its doorbell in' });
      const errors: SluiceEventMap['doorbell:error'][] = [];
      other.events.on('doorbell:error', (e) => errors.push(e));
      for (let n = 0; n < 3; n++) {
        const { id } = await other.enqueue({ name: 'record', queue: 'denied', payload: { n } });
        await waitFor(() => ran(id), { timeoutMs: PICKUP_MS, what: `job ${id} ran (by polling)` });
      }
      expect(errors).toHaveLength(1);
      expect(errors[0]?.error).toMatchObject({ code: 'SLUICE_DOORBELL_UNREACHABLE' });
      expect(errors[0]?.context).toMatch(/another database user/);
      // Polling, or one user for workers and enqueuers: never a privilege to grant.
      expect(errors[0]?.error.message).not.toMatch(/CONNECTION.?ADMIN|SUPER|grant/i);
      await stopped(worker);
    } finally {
      await other.close();
      await db.query(`DROP USER IF EXISTS '${user}'@'%'`);
    }
  }, 60_000);

  it('doorbell: false (or `sluice work --no-doorbell`) registers no doorbell; a non-boolean is refused', async () => {
    const worker = db.sluice.worker({ queues: ['quiet'], jobs: FIXTURE_JOBS, doorbell: false });
    await worker.start();
    const quietProcess = spawnWorker(db.url, { queues: 'quiet-cli', doorbell: false });
    const loud = db.sluice.worker({ queues: ['loud'], jobs: FIXTURE_JOBS });
    await loud.start();
    const loudProcess = spawnWorker(db.url, { queues: 'loud-cli' });
    try {
      await quietProcess.ready;
      await waitFor(async () => (await doorbells('loud')).length === 1, { what: 'the default worker’s doorbell' });
      await waitFor(async () => (await doorbells('loud-cli')).length === 1, { what: 'the default process’s doorbell' });
      expect(await doorbells('quiet')).toEqual([]);
      expect(await doorbells('quiet-cli')).toEqual([]);
    } finally {
      await worker.stop();
      await loud.stop();
      await stopped(quietProcess);
      await stopped(loudProcess);
    }
    expect(() => db.sluice.worker({ doorbell: 'yes' as unknown as boolean })).toThrow(
      /option doorbell must be true or false/,
    );
  });
});
