import type { JobDefinition, Sluice, SluiceEventMap, SluiceEventName, Worker, WorkerOptions } from '../../src/index.ts';
import type { TestDatabase } from './testDatabase.ts';

/**
 * What tests of running jobs share: an event recorder, a deferred, an abort waiter, and a worker
 * that is always stopped.
 */

export const ALL_EVENTS: readonly SluiceEventName[] = [
  'batch:enqueued',
  'enqueue:throttled',
  'batch:finished',
  'job:claimed',
  'job:completed',
  'job:failed',
  'job:retried',
  'job:dead',
  'job:cancelled',
  'result:dropped',
  'progress:dropped',
  'job:conflicted',
  'job:snoozed',
  'job:unknown',
  'claim:lost',
  'worker:started',
  'worker:stopping',
  'worker:stopped',
  'worker:error',
  'leader:acquired',
  'leader:lost',
  'maintenance:completed',
  'maintenance:error',
  'maintenance:skipped',
  'promise:broken',
  'promise:kept',
];

export type Recorded = { [K in SluiceEventName]: SluiceEventMap[K][] };

/** Records every event of one sluice instance, per name, in order. */
export function recordEvents(sluice: Sluice): Recorded {
  const seen = Object.fromEntries(ALL_EVENTS.map((n) => [n, []])) as unknown as Recorded;
  for (const name of ALL_EVENTS) sluice.events.on(name, (payload) => (seen[name] as unknown[]).push(payload));
  return seen;
}

/** A fresh instance of the test database's install with its events recorded: a test sees only its own. */
export function openRecorded(db: TestDatabase): { sluice: Sluice; events: Recorded } {
  const sluice = db.open();
  return { sluice, events: recordEvents(sluice) };
}

export interface Deferred<T = void> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Resolves when the signal aborts (at once if it already did). */
export function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

/** Starts a worker, runs `fn`, and always stops the worker (also when `fn` throws). */
export async function withWorker<T>(
  sluice: Sluice,
  jobs: JobDefinition<any>[],
  options: WorkerOptions,
  fn: (worker: Worker) => Promise<T>,
): Promise<T> {
  // Idle polls back off only up to a fraction of a second, so a job enqueued mid-test is seen soon.
  const pollIntervalMs = options.pollIntervalMs ?? 20;
  const worker = sluice.worker({ pollIntervalMs, maxPollIntervalMs: Math.max(200, pollIntervalMs), ...options, jobs });
  await worker.start();
  try {
    return await fn(worker);
  } finally {
    await worker.stop();
  }
}

/** Milliseconds from NOW(3) to a job's run_at, on the database clock. */
export async function msUntilRunAt(db: TestDatabase, id: number): Promise<number> {
  const [row] = await db.query<{ ahead: string | number }>(
    'SELECT TIMESTAMPDIFF(MICROSECOND, NOW(3), run_at) / 1000 AS ahead FROM sluice_jobs WHERE id = ?',
    [id],
  );
  if (!row) throw new Error(`job ${id} is not in sluice_jobs`);
  return Number(row.ahead);
}

/**
 * Counts the head scans (the claim's `… ORDER BY priority, run_at, id` read, either strategy) one
 * sluice instance sends for `queue`: proof that a worker tried to claim from it.
 */
export function countHeadScans(sluice: Sluice, queue: string): () => number {
  let scans = 0;
  sluice.knex.on('query', (q: { sql: string; bindings?: unknown[] }) => {
    if (/ORDER BY priority, run_at, id/.test(q.sql) && q.bindings?.[0] === queue) scans++;
  });
  return () => scans;
}
