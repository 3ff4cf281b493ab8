import { describe, expect, it } from 'vitest';
import { countRows } from '../helpers/factory.ts';
import { jsonOutput, OPS_JOBS, runCli } from '../helpers/runCli.ts';
import { spawnSluice } from '../helpers/spawnSluice.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';

/**
 * docs/operating.md "Retention", as real processes: `sluice settings` shows and stores the
 * install's retentions; `sluice maintenance` and `sluice work` follow them without a flag of their
 * own, and a worker whose own flag differs from the stored value is refused.
 */
const db = useTestDatabase('cli_settings');

const DAY = 24 * 3600 * 1000;
const settings = (...args: string[]) => runCli(['settings', ...args, '--url', db.url]);

async function insertHistory(firstId: number, count: number, agoMs: number): Promise<void> {
  const ids = Array.from({ length: count }, (_, i) => firstId + i);
  await db.query(
    `INSERT INTO sluice_job_history (job_id, queue, name, payload, retry_times, batch_id, created_at, finished_at)
     VALUES ${ids.map(() => `(?, 'q', 'ok', '{}', 0, NULL, NOW(3) - INTERVAL ? MICROSECOND, NOW(3) - INTERVAL ? MICROSECOND)`).join(', ')}`,
    ids.flatMap((id) => [id, (agoMs + 1) * 1000, agoMs * 1000]),
  );
}

describe('sluice settings', () => {
  it('prints the settings in force, stores them with set (ms, Infinity, default), and refuses bad flags with exit 2', async () => {
    expect(jsonOutput(await settings())).toEqual({ historyRetentionMs: DAY, deadRetentionMs: 7 * DAY, stored: {} });
    const set = await settings('set', '--history-retention-ms', '30000', '--dead-retention-ms', 'Infinity');
    expect(set.code, set.stderr).toBe(0);
    expect(jsonOutput(set)).toEqual({
      historyRetentionMs: 30_000,
      deadRetentionMs: 'Infinity',
      stored: { historyRetentionMs: 30_000, deadRetentionMs: 'Infinity' },
    });
    expect(jsonOutput(await settings('set', '--dead-retention-ms', 'default'))).toMatchObject({
      deadRetentionMs: 7 * DAY,
      stored: { historyRetentionMs: 30_000 },
    });
    const bad = await settings('set', '--history-retention-ms', 'soon');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--history-retention-ms must be whole milliseconds, Infinity or default');
    expect((await settings('set')).code).toBe(2);
    expect((await settings('--history-retention-ms', '5')).code).toBe(2);
    expect(jsonOutput(await settings())).toMatchObject({ historyRetentionMs: 30_000 });
  });

  it('sluice maintenance --once prunes at the stored retention, with no flag of its own', async () => {
    expect((await settings('set', '--history-retention-ms', '60000')).code).toBe(0);
    await insertHistory(1, 7, 120_000);
    await insertHistory(100, 2, 5_000);
    const once = await runCli(['maintenance', '--once', '--url', db.url]);
    expect(once.code, once.stderr).toBe(0);
    expect(jsonOutput<{ tasks: { pruneHistory: { pruned: number } } }>(once).tasks.pruneHistory.pruned).toBe(7);
    expect(await countRows(db, 'sluice_job_history')).toBe(2);
  });

  it('a worker started with a different --history-retention-ms is refused; one without follows the install (0: no history written)', async () => {
    expect((await settings('set', '--history-retention-ms', '0')).code).toBe(0);
    const refused = await runCli(['work', '--url', db.url, '--jobs', OPS_JOBS, '--history-retention-ms', '60000']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("historyRetentionMs is 60000 in this process but the install's setting is 0");

    await db.sluice.enqueueBatch([1, 2, 3].map((n) => ({ name: 'sleep', queue: 'settings', payload: { ms: n } })));
    const worker = spawnSluice('work', ['--url', db.url, '--jobs', OPS_JOBS, '--queues', 'settings']);
    try {
      await worker.ready;
      await waitFor(async () => (await countRows(db, 'sluice_jobs')) === 0, { what: 'the three jobs run' });
    } finally {
      expect((await worker.stop()).code, worker.describe()).toBe(0);
    }
    expect(worker.events('job:completed').length).toBe(3);
    expect(await countRows(db, 'sluice_job_history')).toBe(0);
  });

  it('a running worker follows a setting stored after it started (within its refresh, half a minute)', async () => {
    const worker = spawnSluice('work', ['--url', db.url, '--jobs', OPS_JOBS, '--queues', 'settings-live']);
    /** Runs one job through the worker; whether it left a history row. */
    const runOne = async (): Promise<boolean> => {
      const { id } = await db.sluice.enqueue({ name: 'sleep', queue: 'settings-live', payload: { ms: 1 } });
      await waitFor(async () => (await countRows(db, 'sluice_jobs')) === 0, { what: `job ${id} run` });
      return (await db.query('SELECT 1 FROM sluice_job_history WHERE job_id = ?', [id])).length === 1;
    };
    try {
      await worker.ready;
      expect(await runOne()).toBe(true); // nothing stored: the default 24 h
      expect((await settings('set', '--history-retention-ms', '0')).code).toBe(0);
      await waitFor(async () => !(await runOne()), {
        what: 'a job finished without history once the worker read the stored 0',
        timeoutMs: 90_000,
        intervalMs: 1_000,
      });
    } finally {
      expect((await worker.stop()).code, worker.describe()).toBe(0);
    }
  });
});
