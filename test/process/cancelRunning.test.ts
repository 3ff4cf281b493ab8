import { beforeAll, describe, expect, it } from 'vitest';
import { createFixtureTables } from '../fixtures/fixtureTables.ts';
import { countRows } from '../helpers/factory.ts';
import { type LogLine, type SluiceProcess, spawnMaintenance, spawnWorker } from '../helpers/spawnSluice.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';

/**
 * README "Cancelling": a job running in another process (a real `sluice work`) is cancelled from
 * this one. Its worker learns of it within one heartbeat — the abort lands before the worker's
 * second registry heartbeat after the cancel committed — aborts ctx.signal with
 * JobCancelledError, and the job ends as cancelled although the handler carries on and returns;
 * an exactly-once handler's write rolls back; with a maintenance process sweeping all along, the
 * job never runs again, and the worker goes on with other jobs.
 */
const db = useTestDatabase('process_cancel');
const QUEUE = 'cancel';
const HEARTBEAT_MS = 1_000;

beforeAll(() => createFixtureTables(db));

interface Abort {
  job_id: number;
  pid: number;
  code: string;
  aborted_at: Date;
}

/** The worker's registry heartbeats seen after `since` (DB clock), polled until `until` holds. */
async function heartbeatsUntil(workerPid: number, since: Date, until: () => boolean): Promise<Date[]> {
  const beats = new Set<number>();
  await waitFor(
    async () => {
      const [row] = await db.query<{ heartbeat_at: Date }>('SELECT heartbeat_at FROM sluice_workers WHERE pid = ?', [
        workerPid,
      ]);
      if (row && row.heartbeat_at > since) beats.add(row.heartbeat_at.getTime());
      return until() && beats.size >= 2;
    },
    { intervalMs: 20, what: 'the cancel noticed and two heartbeats seen' },
  );
  return [...beats].sort((a, b) => a - b).map((t) => new Date(t));
}

async function stopAll(...processes: SluiceProcess[]): Promise<void> {
  const exits = await Promise.all(processes.map((p) => p.stop()));
  for (const [i, exit] of exits.entries()) expect(exit, processes[i]?.describe()).toEqual({ code: 0, signal: null });
}

describe('cancelling a job running in another process', () => {
  it('stops it within one heartbeat as cancelled; it never runs again; an exactly-once write rolls back', async () => {
    const worker = spawnWorker(db.url, {
      queues: QUEUE,
      concurrency: 4,
      heartbeatIntervalMs: HEARTBEAT_MS,
      lockTimeoutMs: 60_000,
      pollIntervalMs: 100,
    });
    const sweeper = spawnMaintenance(db.url, { lockTimeoutMs: 60_000, jitterMs: 50 });
    await Promise.all([worker.ready, sweeper.ready]);
    const { id } = await db.sluice.enqueue({ name: 'cancellable', queue: QUEUE });
    const { id: txId } = await db.sluice.enqueue({ name: 'cancellableTx', queue: QUEUE });
    await waitFor(async () => (await countRows(db, 'test_starts')) === 2, { what: 'both jobs started' });
    expect(await db.sluice.jobs.get(id)).toMatchObject({ state: 'running', lock: { pid: worker.pid } });

    expect(await db.sluice.jobs.cancel([id, txId])).toEqual({ cancelled: 2 });
    const [{ now: cancelledAt }] = (await db.query<{ now: Date }>('SELECT NOW(3) AS now')) as [{ now: Date }];
    const cancelled = (l: LogLine) => l.event === 'job:cancelled';
    const beats = await heartbeatsUntil(worker.pid, cancelledAt, () => worker.events('job:cancelled').length === 2);
    await worker.waitForLine(cancelled, 0);

    const aborts = await db.query<Abort>('SELECT job_id, pid, code, aborted_at FROM test_aborts ORDER BY job_id');
    expect(aborts.map((a) => [Number(a.job_id), a.pid, a.code])).toEqual([
      [id, worker.pid, 'SLUICE_JOB_CANCELLED'],
      [txId, worker.pid, 'SLUICE_JOB_CANCELLED'],
    ]);
    // The first beat that began after the cancel noticed it; at the latest, the one after that.
    // (aborted_at is the handler's clock at the abort: a beat in flight at the cancel counts among
    // the beats, so the beat that noticed may be beats[1], and the row the handler then wrote could
    // reach the server after that beat's registry write.)
    for (const abort of aborts) expect(abort.aborted_at.getTime()).toBeLessThanOrEqual((beats[1] as Date).getTime());
    expect(
      worker
        .events('job:cancelled')
        .map((l) => l.jobId)
        .sort(),
    ).toEqual([id, txId].sort());
    expect(worker.events('job:completed')).toEqual([]);
    expect(worker.events('claim:lost')).toEqual([]);

    // The at-least-once handler carried on (its effect is its own business); the exactly-once one rolled back.
    expect(
      (await db.query<{ job_id: number }>('SELECT job_id FROM test_effects')).map((r) => Number(r.job_id)),
    ).toEqual([id]);
    for (const jobId of [id, txId]) {
      expect(await db.sluice.jobs.get(jobId)).toMatchObject({ state: 'cancelled', result: undefined });
    }

    // The worker goes on with other jobs; the sweeper has passed over the cancelled ones; neither ran again.
    const { id: next } = await db.sluice.enqueue({ name: 'record', queue: QUEUE, payload: { n: 7 } });
    await worker.waitForLine((l) => l.event === 'job:completed' && l.jobId === next, 30_000, 'the next job');
    const passes = sweeper.events('maintenance:completed').length;
    await sweeper.waitForLine(
      () => sweeper.events('maintenance:completed').length >= passes + 2,
      30_000,
      'two more maintenance passes',
    );
    expect(await countRows(db, 'test_starts')).toBe(2);
    expect(await countRows(db, 'sluice_jobs')).toBe(0);
    expect(await countRows(db, 'sluice_dead_jobs')).toBe(0);
    await stopAll(worker, sweeper);
  });
});
