import { describe, expect, it } from 'vitest';
import { fromKnex } from '../../src/db/executor.ts';
import { attemptRetentionMs } from '../../src/jobControl/pruneAttemptRows.ts';
import { pruneJobErrors } from '../../src/jobControl/pruneJobErrors.ts';
import { pruneJobLogs } from '../../src/jobControl/pruneJobLogs.ts';
import { HOUR, insertJob, MINUTE } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * A job's attempt errors and log lines are kept while it is live and as long as its history or
 * dead row, and pruned (a bounded batch at a time) once it is in none of them and they are older
 * than the longer of the two retentions.
 */
const db = useTestDatabase('prune_attempts');

/** One error row and one log line of job `id`, written `agoMs` ago. */
async function traces(id: number, agoMs: number): Promise<void> {
  await db.query(
    `INSERT INTO sluice_job_errors (job_id, attempt, failed_at, message) VALUES (?, 1, NOW(3) - INTERVAL ? MICROSECOND, 'e')`,
    [id, agoMs * 1000],
  );
  await db.query(
    `INSERT INTO sluice_job_logs (job_id, attempt, line, logged_at, message) VALUES (?, 1, 1, NOW(3) - INTERVAL ? MICROSECOND, 'l')`,
    [id, agoMs * 1000],
  );
}

async function kept(): Promise<{ errors: number[]; logs: number[] }> {
  const ids = async (table: string) =>
    (await db.query<{ job_id: number }>(`SELECT job_id FROM ${table} ORDER BY job_id`)).map((r) => Number(r.job_id));
  return { errors: await ids('sluice_job_errors'), logs: await ids('sluice_job_logs') };
}

function tasks(retentionMs: number) {
  const taskDb = { db: fromKnex(db.sluice.knex), tables: db.sluice.tables };
  const options = { retentionMs, batchSize: 2, maxBatches: 10, jitterMs: 0 };
  return [pruneJobErrors(taskDb, options), pruneJobLogs(taskDb, options)];
}

describe('pruning attempt errors and log lines', () => {
  it('keeps those of live, completed and dead jobs; prunes those of jobs gone past the retention', async () => {
    const live = await insertJob(db, { retryTimes: 1 });
    const completed = 900_001;
    const dead = 900_002;
    const gone = [900_003, 900_004, 900_005];
    const goneRecently = 900_006;
    await db.query(
      `INSERT INTO sluice_job_history (job_id, queue, name, payload, retry_times, created_at, finished_at) VALUES (?, 'q', 'n', '{}', 1, NOW(3), NOW(3))`,
      [completed],
    );
    await db.query(
      `INSERT INTO sluice_dead_jobs (id, queue, name, payload, priority, retry_times, created_at, failed_at) VALUES (?, 'q', 'n', '{}', 0, 1, NOW(3), NOW(3))`,
      [dead],
    );
    for (const id of [live, completed, dead, ...gone]) await traces(id, 3 * HOUR);
    await traces(goneRecently, MINUTE);

    const retentionMs = attemptRetentionMs({ historyRetentionMs: HOUR, deadRetentionMs: 2 * HOUR });
    expect(retentionMs).toBe(2 * HOUR);
    const [errors, logs] = tasks(retentionMs) as [ReturnType<typeof pruneJobErrors>, ReturnType<typeof pruneJobLogs>];
    expect(await errors.runOnce()).toEqual({ pruned: 3 });
    expect(await logs.runOnce()).toEqual({ pruned: 3 });
    const survivors = [live, completed, dead, goneRecently].sort((a, b) => a - b);
    expect(await kept()).toEqual({ errors: survivors, logs: survivors });

    // The history row goes (its own retention): its job's rows go at the next pass.
    await db.query('DELETE FROM sluice_job_history WHERE job_id = ?', [completed]);
    expect(await errors.runOnce()).toEqual({ pruned: 1 });
    expect(await logs.runOnce()).toEqual({ pruned: 1 });
    expect((await kept()).errors).not.toContain(completed);
  });

  it('keeps everything while either retention keeps its rows until purged (Infinity)', async () => {
    await traces(900_010, 100 * HOUR);
    const retentionMs = attemptRetentionMs({ historyRetentionMs: HOUR, deadRetentionMs: Number.POSITIVE_INFINITY });
    for (const task of tasks(retentionMs)) expect(await task.runOnce()).toEqual({ pruned: 0 });
    expect(await kept()).toEqual({ errors: [900_010], logs: [900_010] });
  });
});
