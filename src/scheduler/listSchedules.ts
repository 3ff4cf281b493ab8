import cron from 'node-cron';
import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { getJob } from '../jobControl/getJob.ts';
import type { JobState } from '../jobControl/jobState.ts';
import type { JobDefinition } from '../model/defineJob.ts';

/**
 * Params: ?1 queue, ?2 `<name>@` (exclusive), ?3 `<name>@~` (exclusive). The latest slot a
 * scheduler enqueued for one recurring job: its idempotency keys are `<name>@<UTC ISO time>`,
 * which sort by time, so this is the last entry of one primary-key range of the keys table (kept
 * for idempotencyRetentionMs after the job finished).
 */
const sqlLastSlot = (t: Tables) => `
SELECT idempotency_key, job_id
FROM ${t.idempotencyKeys}
WHERE queue = ?
  AND idempotency_key > ?
  AND idempotency_key < ?
ORDER BY idempotency_key DESC
LIMIT 1`;

export interface ScheduleInfo {
  readonly name: string;
  readonly queue: string;
  readonly schedule: string;
  /** null: the process's own time zone. */
  readonly timezone: string | null;
  /** The next tick, by node-cron, from now. */
  readonly nextSlot: Date | null;
  /** The latest tick enqueued (null if none within the keys' retention), its job, and where that job is. */
  readonly lastSlot: Date | null;
  readonly lastJobId: number | null;
  readonly lastJobState: JobState | null;
}

/** The recurring jobs among `definitions`, each with its next slot and the last one enqueued. */
export async function listSchedules(
  db: Executor,
  tables: Tables,
  definitions: readonly JobDefinition<any>[],
): Promise<ScheduleInfo[]> {
  const scheduled = definitions.filter((d) => d.schedule !== undefined).sort((a, b) => a.name.localeCompare(b.name));
  const out: ScheduleInfo[] = [];
  for (const definition of scheduled) {
    const queue = definition.queue ?? 'default';
    const [last] = await db.select<{ idempotency_key: string; job_id: number | string | null }>(sqlLastSlot(tables), [
      queue,
      `${definition.name}@`,
      `${definition.name}@~`,
    ]);
    const lastJobId = last?.job_id === null || last?.job_id === undefined ? null : Number(last.job_id);
    const lastJob = lastJobId === null ? null : await getJob(db, tables, lastJobId);
    out.push({
      name: definition.name,
      queue,
      schedule: definition.schedule as string,
      timezone: definition.timezone ?? null,
      nextSlot: nextSlot(definition),
      lastSlot: last ? new Date(last.idempotency_key.slice(definition.name.length + 1)) : null,
      lastJobId,
      lastJobState: lastJob?.state ?? null,
    });
  }
  return out;
}

/** node-cron's next match from now, without starting a task (the task is made and destroyed at once). */
function nextSlot(definition: JobDefinition<any>): Date | null {
  const task = cron.createTask(definition.schedule as string, () => undefined, { timezone: definition.timezone });
  try {
    return task.getNextRuns(1)[0] ?? null;
  } finally {
    void task.destroy();
  }
}
