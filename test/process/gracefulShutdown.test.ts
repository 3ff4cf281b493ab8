import { beforeAll, describe, expect, it } from 'vitest';
import { createFixtureTables, openGate } from '../fixtures/fixtureTables.ts';
import { isClaimOf } from '../helpers/claimKey.ts';
import { NO_CLAIM } from '../helpers/factory.ts';
import { type SluiceProcess, spawnWorker } from '../helpers/spawnSluice.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';

/**
 * SIGINT (what PM2 sends) to a `sluice work` process with jobs in flight: it stops claiming, lets
 * running jobs finish up to --shutdown-timeout-ms, gives back (fenced, retry_times unchanged) the
 * claim of a job still running at the deadline, and exits 0. A second signal forces the stop.
 */
const db = useTestDatabase('process_shutdown');
const QUEUE = 'shutdown';

interface JobState {
  id: number;
  name: string;
  lock_id: string;
  locked_at: Date;
  retry_times: number;
  last_error: string | null;
}

beforeAll(() => createFixtureTables(db));

async function jobRows(): Promise<JobState[]> {
  return db.query<JobState>(
    'SELECT id, name, lock_id, locked_at, retry_times, last_error FROM sluice_jobs ORDER BY id',
  );
}

/** Waits until worker `w` holds every job in `ids` and has started each handler. */
async function allRunningOn(w: SluiceProcess, ids: number[]): Promise<void> {
  await waitFor(
    async () => {
      const rows = (await jobRows()).filter((r) => ids.includes(r.id));
      const held = [];
      for (const r of rows) if (await isClaimOf(db, r.lock_id, w.pid)) held.push(r);
      const started = await db.query('SELECT DISTINCT job_id FROM test_starts WHERE pid = ?', [w.pid]);
      return held.length === ids.length && started.length === ids.length;
    },
    { what: `jobs ${ids.join(', ')} running on worker ${w.pid}` },
  );
}

describe('graceful shutdown (real process)', () => {
  it('SIGINT: stops claiming, finishes in-flight jobs, releases the one still running at the deadline, exits 0', async () => {
    const gated = [
      (await db.sluice.enqueue({ name: 'gated', queue: QUEUE, payload: { n: 1 } })).id,
      (await db.sluice.enqueue({ name: 'gated', queue: QUEUE, payload: { n: 2 } })).id,
    ];
    const { id: stuck } = await db.sluice.enqueue({ name: 'hang', queue: QUEUE });
    const w = spawnWorker(db.url, { queues: QUEUE, concurrency: 3, pollIntervalMs: 200, shutdownTimeoutMs: 4_000 });
    await w.ready;
    await allRunningOn(w, [...gated, stuck]);

    // Every slot is busy, so these wait in the queue; once stopping, the worker must not take them.
    await db.sluice.enqueueBatch(
      Array.from({ length: 5 }, (_, n) => ({ name: 'record', queue: QUEUE, payload: { n: 100 + n } })),
    );

    w.kill('SIGINT');
    const stopping = await w.waitForLine((l) => l.event === 'worker:stopping', 10_000, 'worker:stopping');
    expect(stopping.inFlight).toBe(3);
    // Slots free up while it drains (the gated jobs end now); the hang job never ends by itself.
    await openGate(db, w.pid);

    const exit = await w.exited;
    expect(exit, w.describe()).toEqual({ code: 0, signal: null });

    // The in-flight jobs finished within the deadline: run once, completed, deleted.
    expect(await db.query('SELECT job_id, pid FROM test_effects ORDER BY job_id')).toEqual(
      gated.map((job_id) => ({ job_id, pid: w.pid })),
    );
    expect(
      w
        .events('job:completed')
        .map((l) => l.jobId)
        .sort(),
    ).toEqual([...gated].sort());
    // The stuck job was given back as it was: free, due, retry_times unchanged, no error recorded.
    const left = await jobRows();
    expect(left.find((r) => r.id === stuck)).toEqual({
      id: stuck,
      name: 'hang',
      lock_id: '',
      locked_at: NO_CLAIM,
      retry_times: 0,
      last_error: null,
    });
    // Nothing was claimed after the stop began: the five waiting jobs are untouched and never ran.
    const waiting = left.filter((r) => r.name === 'record');
    expect(waiting).toHaveLength(5);
    expect(waiting.every((r) => r.lock_id === '' && r.retry_times === 0)).toBe(true);
    const claimed = w.events('job:claimed');
    expect(claimed.every((l) => l.time <= stopping.time)).toBe(true);
    expect(claimed.reduce((sum, l) => sum + (l.count as number), 0)).toBe(3);
    expect(await w.waitForLine((l) => l.event === 'worker:stopped', 0, 'worker:stopped')).toMatchObject({
      released: 1,
    });
    expect(await db.query('SELECT id FROM sluice_dead_jobs')).toEqual([]);
  });

  it('a second SIGINT forces the stop without waiting out the deadline: the running job is released, exit 0', async () => {
    const { id: stuck } = await db.sluice.enqueue({ name: 'hang', queue: QUEUE });
    // A deadline far longer than the test: only the forced stop can end the process in time.
    const w = spawnWorker(db.url, { queues: QUEUE, concurrency: 2, pollIntervalMs: 200, shutdownTimeoutMs: 600_000 });
    await w.ready;
    await allRunningOn(w, [stuck]);

    w.kill('SIGINT');
    await w.waitForLine((l) => l.event === 'worker:stopping', 10_000, 'worker:stopping');
    w.kill('SIGINT');
    await w.waitForLine((l) => l.event === 'shutdown:forced', 10_000, 'shutdown:forced');

    const exit = await w.exited;
    expect(exit, w.describe()).toEqual({ code: 0, signal: null });
    expect(await jobRows()).toEqual([
      { id: stuck, name: 'hang', lock_id: '', locked_at: NO_CLAIM, retry_times: 0, last_error: null },
    ]);
    expect(w.events('worker:stopped')).toMatchObject([{ released: 1 }]);
  });
});
