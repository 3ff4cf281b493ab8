import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { defineJob, type LoadReading, type WorkerInfo } from '../../src/index.ts';
import { workerKeyOf } from '../../src/model/claimKey.ts';
import { taskCount } from '../helpers/maintenanceLog.ts';
import { jsonOutput, OPS_JOBS, runCli } from '../helpers/runCli.ts';
import { spawnSluice } from '../helpers/spawnSluice.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { aborted } from '../helpers/workerHarness.ts';

/**
 * README "Worker registry and fast recovery": every worker keeps a row in sluice_workers that its
 * heartbeat refreshes and stop() removes; `sluice.workers.list()` and `sluice workers --json` list it.
 * A worker that stops heartbeating (kill -9) is declared dead by the sweeper within a few of its
 * heartbeat intervals, and its claims go back to the queue long before the lock timeout.
 */
const db = useTestDatabase('ops_registry');

interface WorkerRow {
  id: string;
  host: string;
  pid: number;
  queues: string;
  heartbeat_interval_ms: number;
  concurrency: number;
  concurrency_limit: number;
  in_flight: number;
  processed: number;
  failed: number;
  cpu: number | null;
  free_mem: number | null;
  counters: string | null;
  started_at: Date;
  heartbeat_at: Date;
}

async function workerRows(): Promise<WorkerRow[]> {
  return db.query<WorkerRow>('SELECT * FROM sluice_workers ORDER BY id');
}

/** Resolves once `signal` aborts. */

describe('worker registry', () => {
  it('an in-process worker registers its row, heartbeats load, in-flight and per-queue counts into it, is listed, and deregisters on stop', async () => {
    const sluice = db.open();
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    const hold = defineJob({ name: 'hold', handle: (_p, ctx) => Promise.race([gate, aborted(ctx.signal)]) });
    const ok = defineJob({ name: 'ok', handle: () => undefined });
    const bad = defineJob({
      name: 'bad',
      maxRetries: 0,
      handle: () => {
        throw new Error('bad on purpose');
      },
    });
    const reading: LoadReading = { cpu: 0.25, freeMem: 0.6 };
    const worker = sluice.worker({
      queues: ['reg-a', 'reg-b'],
      concurrency: 4,
      jobs: [hold, ok, bad],
      heartbeatIntervalMs: 100,
      lockTimeoutMs: 10_000,
      pollIntervalMs: 20,
      maxPollIntervalMs: 100,
      loadSampler: async () => reading,
    });
    await worker.start();
    try {
      // Registered by start(), before any job or heartbeat.
      const [registered, ...others] = await workerRows();
      expect(others).toEqual([]);
      expect(registered).toMatchObject({
        id: worker.id,
        host: hostname().slice(0, 64),
        pid: process.pid,
        queues: 'reg-a,reg-b',
        heartbeat_interval_ms: 100,
        concurrency: 4,
        concurrency_limit: 4,
        in_flight: 0,
        processed: 0,
        failed: 0,
      });
      const firstBeat = (registered as WorkerRow).heartbeat_at.getTime();

      await sluice.enqueueBatch([
        { name: 'ok', queue: 'reg-a' },
        { name: 'ok', queue: 'reg-a' },
        { name: 'ok', queue: 'reg-a' },
        { name: 'bad', queue: 'reg-b' },
        { name: 'hold', queue: 'reg-b' },
        { name: 'hold', queue: 'reg-b' },
      ]);
      // A later heartbeat carries the outcome: 4 finished (1 of them failed and dead-lettered), 2 running.
      const beat = await waitFor(
        async () => {
          const [row] = await workerRows();
          const counters = row?.counters ? (JSON.parse(row.counters) as Record<string, { completed: number }>) : {};
          return row && row.processed === 4 && row.in_flight === 2 && counters['reg-a']?.completed === 3
            ? row
            : undefined;
        },
        { what: 'a heartbeat with 4 processed and 2 in flight' },
      );
      expect(beat).toMatchObject({ failed: 1, cpu: 0.25, free_mem: 0.6, concurrency_limit: 4 });
      expect(JSON.parse(beat.counters as string)).toEqual({
        'reg-a': { completed: 3, failed: 0, dead: 0, cancelled: 0, snoozed: 0 },
        'reg-b': { completed: 0, failed: 1, dead: 1, cancelled: 0, snoozed: 0 },
      });
      expect(beat.heartbeat_at.getTime()).toBeGreaterThan(firstBeat);
      expect(beat.started_at.getTime()).toBe((registered as WorkerRow).started_at.getTime());

      // The heartbeat keeps going: heartbeat_at moves on while the worker lives.
      await waitFor(async () => ((await workerRows())[0]?.heartbeat_at.getTime() ?? 0) > beat.heartbeat_at.getTime(), {
        what: 'a further heartbeat',
      });

      // The API lists it...
      const listed = await sluice.workers.list();
      expect(listed).toHaveLength(1);
      expect(listed[0]).toMatchObject({
        id: worker.id,
        host: hostname().slice(0, 64),
        pid: process.pid,
        queues: ['reg-a', 'reg-b'],
        heartbeatIntervalMs: 100,
        concurrency: 4,
        concurrencyLimit: 4,
        inFlight: 2,
        processed: 4,
        failed: 1,
        cpu: 0.25,
        freeMem: 0.6,
        counters: {
          'reg-a': { completed: 3, failed: 0, dead: 0, cancelled: 0, snoozed: 0 },
          'reg-b': { completed: 0, failed: 1, dead: 1, cancelled: 0, snoozed: 0 },
        },
      });
      expect(listed[0]?.heartbeatAgeMs).toBeGreaterThanOrEqual(0);
      expect(listed[0]?.heartbeatAgeMs).toBeLessThan(10_000);

      // ...and so does the CLI.
      const cli = await runCli(['workers', '--json', '--url', db.url]);
      expect(cli.code, cli.stderr).toBe(0);
      const { workers } = jsonOutput<{ workers: WorkerInfo[] }>(cli);
      expect(workers.map((w) => w.id)).toEqual([worker.id]);
      expect(workers[0]).toMatchObject({
        pid: process.pid,
        queues: ['reg-a', 'reg-b'],
        concurrency: 4,
        inFlight: 2,
        processed: 4,
        failed: 1,
      });

      openGate();
      await waitFor(async () => (await workerRows())[0]?.processed === 6, { what: 'the held jobs finished' });
    } finally {
      openGate();
      await worker.stop();
    }
    // stop() deregistered it.
    expect(await workerRows()).toEqual([]);
    expect(await sluice.workers.list()).toEqual([]);
    const cli = await runCli(['workers', '--json', '--url', db.url]);
    expect(jsonOutput<{ workers: WorkerInfo[] }>(cli).workers).toEqual([]);
  });

  it('a SIGKILLed worker process: its claims are back in the queue within 3.5 heartbeat intervals, far below the lock timeout, and its row is gone', async () => {
    const HEARTBEAT_MS = 2_000;
    const LOCK_TIMEOUT_MS = 60_000;
    const { batchId } = await db.sluice.enqueueBatch(
      [1, 2, 3].map(() => ({ name: 'sleep', queue: 'reg-crash', payload: { ms: 120_000 } })),
    );
    const sweeper = spawnSluice('maintenance', [
      '--url',
      db.url,
      '--schedule',
      '* * * * * *',
      '--jitter-ms',
      '100',
      '--lock-timeout-ms',
      String(LOCK_TIMEOUT_MS),
      '--missed-heartbeats',
      '2',
    ]);
    const doomed = spawnSluice('work', [
      '--url',
      db.url,
      '--jobs',
      OPS_JOBS,
      '--queues',
      'reg-crash',
      '--concurrency',
      '3',
      '--heartbeat-interval-ms',
      String(HEARTBEAT_MS),
      '--lock-timeout-ms',
      String(LOCK_TIMEOUT_MS),
      '--poll-interval-ms',
      '100',
    ]);
    await Promise.all([sweeper.ready, doomed.ready]);
    const workerId = (await doomed.waitForLine((l) => l.event === 'worker:started', 10_000, 'worker:started'))
      .workerId as string;
    // The sweeper already leads (so leader election is not part of the measured time).
    await sweeper.waitForLine(
      (l) => l.event === 'maintenance:completed' && l.leader === true,
      10_000,
      'a sweep as leader',
    );

    // The worker holds all three claims, and its row says so.
    await waitFor(
      async () => {
        const [row] = await db.query<{ n: number }>(
          'SELECT COUNT(*) AS n FROM sluice_jobs WHERE batch_id = ? AND lock_id LIKE ?',
          [batchId, `${workerKeyOf(workerId)}.%`],
        );
        return Number(row?.n) === 3;
      },
      { what: `worker ${workerId} holding the 3 jobs` },
    );
    await waitFor(
      async () =>
        (await db.query<WorkerRow>('SELECT in_flight FROM sluice_workers WHERE id = ?', [workerId]))[0]?.in_flight ===
        3,
      {
        what: 'a heartbeat reporting 3 in flight',
      },
    );

    await waitFor(
      async () => (await db.query('SELECT 1 FROM sluice_doorbells WHERE worker_id = ?', [workerId])).length === 1,
      { what: 'the worker’s doorbell registered' },
    );

    doomed.kill('SIGKILL');
    const killedAt = Date.now();
    expect(await doomed.exited, doomed.describe()).toEqual({ code: null, signal: 'SIGKILL' });

    const released = await waitFor(
      async () => {
        const rows = await db.query<{ id: number; lock_id: string; retry_times: number; last_error: string | null }>(
          'SELECT id, lock_id, retry_times, last_error FROM sluice_jobs WHERE batch_id = ? ORDER BY id',
          [batchId],
        );
        return rows.length === 3 && rows.every((r) => r.lock_id === '' && r.retry_times === 1) ? rows : undefined;
      },
      { what: 'the dead worker’s jobs back in the queue', intervalMs: 20, timeoutMs: 30_000 },
    );
    const recoveryMs = Date.now() - killedAt;
    process.stdout.write(
      `[operations] dead-worker recovery: ${recoveryMs} ms after SIGKILL (heartbeat ${HEARTBEAT_MS} ms, lock timeout ${LOCK_TIMEOUT_MS} ms)\n`,
    );
    // The sweeper judges on its own clock: the worker is dead once its beat has stood unchanged
    // for 2 of its intervals (4 s) between two of the sweeper's observations. The first
    // observation of the last beat comes at most one tick (1 s + ≤ 100 ms jitter) after that
    // beat, and the pass that finds 4 s elapsed at most one more tick after that: 4 + 2 × 1.1 s =
    // 6.2 s after the last beat, hence after the kill. (The bound was 3 intervals, 6 s, while the
    // sweep compared heartbeat_at with its own NOW(3) — one tick less, but two servers' clocks.)
    // Still an order of magnitude below the 60 s lock timeout: only the registry path can have done it.
    expect(recoveryMs).toBeLessThan(3.5 * HEARTBEAT_MS);
    for (const row of released)
      expect(row.last_error).toMatch(
        new RegExp(`^worker of claim ${workerKeyOf(workerId)}\\.\\S+ stopped heartbeating`),
      );
    // The same sweep then removes the dead worker's row.
    await waitFor(async () => (await db.query('SELECT id FROM sluice_workers WHERE id = ?', [workerId])).length === 0, {
      what: 'the dead worker’s registry row removed',
      timeoutMs: 8_000,
    });
    // …and its doorbell: no enqueuer sends a KILL to its connection id any more.
    await waitFor(
      async () => (await db.query('SELECT 1 FROM sluice_doorbells WHERE worker_id = ?', [workerId])).length === 0,
      { what: 'the dead worker’s doorbell removed', timeoutMs: 8_000 },
    );
    const sweep = await sweeper.waitForLine(
      (l) => l.event === 'maintenance:completed' && taskCount(l, 'releaseDeadWorkers', 'claims') > 0,
      8_000,
      'the sweep that released the claims',
    );
    expect(sweep).toMatchObject({
      leader: true,
      tasks: { releaseDeadWorkers: { workers: 1, claims: 3 }, releaseStaleClaims: { claims: 0 } },
    });

    expect(await sweeper.stop(), sweeper.describe()).toEqual({ code: 0, signal: null });
  });
});
