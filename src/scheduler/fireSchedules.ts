import type { Executor } from '../db/executor.ts';
import { chunkLimitsFor } from '../db/planChunks.ts';
import type { Tables } from '../db/tables.ts';
import { withTransaction } from '../db/transaction.ts';
import { BatchWriter } from '../enqueue/BatchWriter.ts';
import { MAX_PAYLOAD_BYTES } from '../maxPayloadBytes.ts';
import { planFire } from '../model/planFire.ts';
import { RESERVED_KEY_PREFIX } from '../model/reservedKeyPrefix.ts';
import { tickRuleOf } from '../model/scheduleSpec.ts';
import { validateJob } from '../model/validateJob.ts';
import { defined, integerIn } from '../options.ts';
import type { SluiceRuntime } from '../sluiceRuntime.ts';
import type { MaintenanceTask } from '../task/MaintenanceTask.ts';
import { ruleFieldsOf, SCHEDULE_COLUMNS, type ScheduleRow } from './scheduleRow.ts';
import { pruneRunsSql, RUNS_KEPT } from './scheduleRuns.ts';

/**
 * Params: ?1 limit. Returns the due schedules, oldest tick first, locked for this transaction (a
 * schedule another fire holds is skipped, not waited for), with the database's clock. Reads ix_due
 * from its start to now: O(due), whatever the number of schedules.
 */
export const sqlDue = (t: Tables) => `
SELECT ${SCHEDULE_COLUMNS}, NOW(3) AS db_now
FROM ${t.schedules}
WHERE next_run_at <= NOW(3)
ORDER BY next_run_at
LIMIT ?
FOR UPDATE SKIP LOCKED`;

/** Params: ?1 (queue, key) pairs (list). The jobs the keys of this fire name. */
const sqlJobIds = (t: Tables) => `
SELECT idempotency_key, job_id
FROM ${t.idempotencyKeys}
WHERE (queue, idempotency_key) IN (?)`;

/** Params: ?1 (key, seq, tick, job id, queue) rows (list). One row per job fired. */
const sqlRuns = (t: Tables) => `
INSERT INTO ${t.scheduleRuns} (schedule_key, seq, tick_at, job_id, queue)
VALUES ?`;

/**
 * Params: per schedule (key, revision, old next, new next, runs, last tick, last job), as a derived
 * table. Advances each schedule, fenced by the revision and the next_run_at this fire read: an
 * upsert, pause or other fire in between leaves it alone. affectedRows = schedules advanced.
 */
const sqlAdvance = (t: Tables, values: string) => `
UPDATE ${t.schedules} s
JOIN (${values}) v
  ON s.schedule_key = v.k
  AND s.revision = v.rev
  AND s.next_run_at = v.old_next
SET s.next_run_at = v.new_next,
    s.runs = v.runs,
    s.last_tick_at = COALESCE(v.last_tick, s.last_tick_at),
    s.last_job_id = COALESCE(v.last_job, s.last_job_id),
    s.updated_at = NOW(3)`;

/** fireSchedules' options. Every field is optional. */
export interface FireSchedulesOptions {
  /** Schedules fired per transaction. @defaultValue 500 */
  readonly batchSize?: number;
  /** Most transactions in one run; past it the task says it is behind. @defaultValue 100 */
  readonly maxBatches?: number;
}

type Resolved = Readonly<Required<FireSchedulesOptions>>;

/** The idempotency key of one tick's job: the same whichever process fires it. */
export function tickKey(scheduleKey: string, tickMs: number): string {
  return `${RESERVED_KEY_PREFIX}schedule:${scheduleKey}@${new Date(tickMs).toISOString()}`;
}

/**
 * Fires the due run-time schedules: per transaction, up to batchSize due schedules locked (SKIP
 * LOCKED), their ticks' jobs written as one batch with the idempotency key of each tick, the runs
 * recorded, and each schedule's next_run_at advanced by a fenced UPDATE whose affected rows must
 * be all of them, or the whole transaction rolls back. Two maintenance leaders (a lease taken over
 * mid-tick, a Galera node each) cannot both fire a tick: the row lock or the certification
 * conflict serialises them, the fence refuses the second, and the tick's key refuses its job.
 */
export function fireSchedules(
  runtime: SluiceRuntime,
  options: FireSchedulesOptions = {},
): MaintenanceTask<'fireSchedules', 'fired' | 'advanced', Resolved> & { readonly behind: boolean } {
  const resolved: Resolved = { batchSize: 500, maxBatches: 100, ...defined(options) };
  integerIn('batchSize', resolved.batchSize, 1, 10_000);
  integerIn('maxBatches', resolved.maxBatches, 1, 10_000);
  let behind = false;
  return {
    name: 'fireSchedules',
    options: resolved,
    get behind() {
      return behind;
    },
    async runOnce() {
      let fired = 0;
      let advanced = 0;
      behind = false;
      for (let batch = 0; batch < resolved.maxBatches; batch++) {
        const step = await withTransaction(runtime.db, (tx) => fireBatch(runtime, tx, resolved.batchSize));
        fired += step.fired;
        advanced += step.advanced;
        if (step.read < resolved.batchSize) return { fired, advanced };
      }
      behind = true;
      return { fired, advanced };
    },
  };
}

interface Fire {
  readonly row: ScheduleRow;
  /** The stored payload, read once with the payload ceiling (undefined when the schedule stops). */
  readonly payload?: unknown;
  readonly ticks: readonly number[];
  readonly next: number | null;
}

async function fireBatch(
  runtime: SluiceRuntime,
  tx: Executor,
  limit: number,
): Promise<{ read: number; fired: number; advanced: number }> {
  const { tables } = runtime;
  const rows = await tx.select<ScheduleRow & { db_now: Date }>(sqlDue(tables), [limit]);
  if (rows.length === 0) return { read: 0, fired: 0, advanced: 0 };
  const fires: Fire[] = rows.map((row) => ({ row, ...planOf(row, row.db_now.getTime()) }));
  const jobIds = await writeJobs(runtime, tx, fires);
  const runRows: unknown[][] = [];
  const prune: [string, number][] = [];
  for (const { row, ticks } of fires) {
    ticks.forEach((tick, i) => {
      const key = tickKey(row.schedule_key, tick);
      runRows.push([row.schedule_key, row.runs + i + 1, new Date(tick), jobIds.get(key) ?? null, row.queue]);
    });
    const runs = row.runs + ticks.length;
    if (ticks.length > 0 && runs > RUNS_KEPT) prune.push([row.schedule_key, runs - RUNS_KEPT]);
  }
  if (runRows.length > 0) await tx.write(sqlRuns(tables), [runRows]);
  if (prune.length > 0) await tx.write(pruneRunsSql(tables, prune.length), prune.flat());
  const columns = ['k', 'rev', 'old_next', 'new_next', 'runs', 'last_tick', 'last_job'];
  const params = fires.flatMap(({ row, ticks, next }) => {
    const last = ticks.length === 0 ? null : (ticks[ticks.length - 1] as number);
    return [
      row.schedule_key,
      row.revision,
      row.next_run_at,
      next === null ? null : new Date(next),
      row.runs + ticks.length,
      last === null ? null : new Date(last),
      last === null ? null : (jobIds.get(tickKey(row.schedule_key, last)) ?? null),
    ];
  });
  const { affectedRows } = await tx.write(sqlAdvance(tables, valuesOf(columns, fires.length)), params);
  if (affectedRows !== fires.length) {
    // Locked FOR UPDATE by this transaction: a mismatch means the rows were not what was read.
    throw new Error(`fireSchedules: advanced ${affectedRows} of ${fires.length} schedules; rolled back`);
  }
  return { read: rows.length, fired: runRows.length, advanced: fires.length };
}

/**
 * The derived table of the fence, typed by its first row: CASTs so that a NULL first value does
 * not make a column of the wrong type.
 */
function valuesOf(columns: readonly string[], rows: number): string {
  const casts = [
    '?',
    'CAST(? AS UNSIGNED)',
    'CAST(? AS DATETIME(3))',
    'CAST(? AS DATETIME(3))',
    'CAST(? AS UNSIGNED)',
    'CAST(? AS DATETIME(3))',
    'CAST(? AS UNSIGNED)',
  ];
  const first = `SELECT ${columns.map((c, i) => `${casts[i]} AS ${c}`).join(', ')}`;
  const rest = `SELECT ${columns.map(() => '?').join(', ')}`;
  return [first, ...Array.from({ length: rows - 1 }, () => rest)].join(' UNION ALL ');
}

function planOf(row: ScheduleRow, nowMs: number): { payload?: unknown; ticks: readonly number[]; next: number | null } {
  try {
    // A payload over the ceiling or not JSON (edited by hand) stops its schedule alone, as a bad rule does.
    if (Buffer.byteLength(row.payload) > MAX_PAYLOAD_BYTES) throw new Error('payload over the ceiling');
    const payload: unknown = JSON.parse(row.payload);
    return {
      payload,
      ...planFire(
        {
          rule: tickRuleOf(ruleFieldsOf(row)),
          nextMs: (row.next_run_at as Date).getTime(),
          lastTickMs: row.last_tick_at?.getTime() ?? null,
          missed: row.missed === 'all' || row.missed === 'once' ? row.missed : 'skip',
          startAt: row.start_at,
          endAt: row.end_at,
          limit: row.run_limit,
          runs: row.runs,
        },
        nowMs,
      ),
    };
  } catch {
    // A stored rule or payload this build cannot read (edited by hand): the schedule stops, visibly (next run none).
    return { ticks: [], next: null };
  }
}

/** Writes one job per tick as one batch; returns the job id of each tick's key. */
async function writeJobs(runtime: SluiceRuntime, tx: Executor, fires: readonly Fire[]): Promise<Map<string, number>> {
  const jobs = fires.flatMap(({ row, payload, ticks }) =>
    ticks.map((tick) => ({
      ...validateJob({ name: row.job_name, queue: row.queue, payload }, 0, {
        maxPayloadBytes: Number.MAX_SAFE_INTEGER,
      }),
      idempotencyKey: tickKey(row.schedule_key, tick),
    })),
  );
  const ids = new Map<string, number>();
  if (jobs.length === 0) return ids;
  const limits = chunkLimitsFor((await runtime.serverInfo()).maxAllowedPacket, runtime.options.maxRowsPerInsert);
  const writer = await BatchWriter.open(runtime, tx, limits, null, null, 'schedules');
  await writer.writeValidated(jobs);
  const written = await writer.close();
  const found = await tx.select<{ idempotency_key: string; job_id: number | string | null }>(
    sqlJobIds(runtime.tables),
    [jobs.map((j) => [j.queue, j.idempotencyKey])],
  );
  for (const { idempotency_key, job_id } of found) if (job_id !== null) ids.set(idempotency_key, Number(job_id));
  if (written.queues.size > 0) runtime.ringer.ring(runtime.tables.prefix, written.queues);
  return ids;
}
