import { describe, expect, it } from 'vitest';
import type { Sluice, SluiceEventMap } from '../../src/index.ts';
import { countRows } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';

/**
 * docs/operating.md "Retention": each retention task keeps deleting small batches while they come
 * back full, within a time budget and a cap on batches per run; one that stops behind runs again
 * after a short jittered pause instead of at the next tick. So a backlog the old fixed cap
 * (20 batches of 500 per pass: 10,000 rows) needed passes for goes in one, and a started
 * maintenance process clears a backlog without waiting for its schedule.
 */
const db = useTestDatabase('prune_pace');

const HOUR = 3600 * 1000;

/** Inserts `count` history rows finished `agoMs` (+ i ms) ago, with job ids from `firstId`, 5,000 per statement. */
async function insertHistory(firstId: number, count: number, agoMs: number): Promise<void> {
  for (let start = 0; start < count; start += 5_000) {
    const ids = Array.from({ length: Math.min(5_000, count - start) }, (_, i) => firstId + start + i);
    await db.query(
      `INSERT INTO sluice_job_history (job_id, queue, name, payload, retry_times, batch_id, created_at, finished_at)
       VALUES ${ids.map(() => `(?, 'old', 'ok', '{}', 0, NULL, NOW(3) - INTERVAL ? MICROSECOND, NOW(3) - INTERVAL ? MICROSECOND)`).join(', ')}`,
      ids.flatMap((id) => [id, (agoMs + (id - firstId) + 1) * 1000, (agoMs + (id - firstId)) * 1000]),
    );
  }
}

/** The row counts of the DELETE statements one sluice instance sends to `table`. */
function recordDeletes(sluice: Sluice, table: string): number[] {
  const sizes: number[] = [];
  sluice.knex.on('query', (q: { sql: string; bindings?: unknown[] }) => {
    if (new RegExp(`^\\s*DELETE FROM \`?${table}\`?\\s`).test(q.sql))
      sizes.push((q.bindings?.[0] as unknown[] | undefined)?.length ?? 0);
  });
  return sizes;
}

const history = () => countRows(db, 'sluice_job_history');

describe('retention keeps pace', () => {
  it('a backlog of 30,000 expired rows — three times the old per-pass cap — goes in one pass of 500-row batches, young rows kept', async () => {
    const sluice = db.open({ historyRetentionMs: HOUR });
    await insertHistory(1, 30_000, 2 * HOUR);
    await insertHistory(100_001, 50, 60_000);
    const deletes = recordDeletes(sluice, 'sluice_job_history');
    // The default batch size and batch cap; a budget no machine runs out of, so the count is exact.
    const maintenance = sluice.maintenance({ pruneBudgetMs: 600_000, passBudgetMs: 600_000, jitterMs: 0 });
    const started = performance.now();
    const pass = await maintenance.runOnce();
    const ms = performance.now() - started;
    await maintenance.stop();
    expect(pass).toMatchObject({ leader: true, tasks: { pruneHistory: { pruned: 30_000 } }, behind: [] });
    // For the record, not asserted (speed is for bench/): the whole pass, every task included.
    process.stderr.write(
      `[prune] 30,000 history rows in one pass: ${Math.round(ms)} ms, ${Math.round(30_000 / (ms / 1000))} rows/s\n`,
    );
    expect(Math.max(...deletes)).toBe(500);
    expect(deletes.length).toBe(60);
    expect(await history()).toBe(50);
  });

  it('a run stops at maxPruneBatches even within its budget, and says it is behind', async () => {
    const sluice = db.open({ historyRetentionMs: HOUR });
    await insertHistory(1, 1_000, 2 * HOUR);
    const maintenance = sluice.maintenance({
      batchSize: 100,
      maxPruneBatches: 3,
      pruneBudgetMs: 600_000,
      passBudgetMs: 600_000,
      jitterMs: 0,
    });
    const first = await maintenance.runOnce();
    expect(first).toMatchObject({ tasks: { pruneHistory: { pruned: 300 } }, behind: ['pruneHistory'] });
    // The oldest went first: what is left is the youngest 700.
    const [oldest] = await db.query<{ id: number }>('SELECT MIN(job_id) AS id FROM sluice_job_history');
    expect(Number(oldest?.id)).toBe(1);
    const [youngestLeft] = await db.query<{ id: number }>('SELECT MAX(job_id) AS id FROM sluice_job_history');
    expect(Number(youngestLeft?.id)).toBe(700);
    await maintenance.stop();
  });

  it('a run that ends on its time budget is behind; a started maintenance process catches up in short passes of the tasks behind, not at its schedule', async () => {
    const sluice = db.open({ historyRetentionMs: HOUR });
    await insertHistory(1, 20_000, 2 * HOUR);
    // A schedule that never ticks during the test, and a budget of 1 ms: every run deletes one batch.
    const maintenance = sluice.maintenance({
      schedule: '0 0 0 1 1 *',
      batchSize: 1_000,
      pruneBudgetMs: 1,
      jitterMs: 0,
    });
    const passes: SluiceEventMap['maintenance:completed'][] = [];
    sluice.events.on('maintenance:completed', (e) => passes.push(e));
    await maintenance.start();
    try {
      const first = await maintenance.runOnce();
      expect(first).toMatchObject({ tasks: { pruneHistory: { pruned: 1_000 } }, behind: ['pruneHistory'] });
      await waitFor(async () => (await history()) === 0, { what: 'the backlog pruned by catch-up passes' });
      await waitFor(() => passes.at(-1)?.behind.length === 0, { what: 'a catch-up pass that caught up' });
    } finally {
      await maintenance.stop();
    }
    const catchUps = passes.slice(1);
    expect(catchUps.length).toBeGreaterThanOrEqual(19);
    // Catch-ups run the tasks behind only: no sweeps, no batch finishing, no queue reading.
    for (const pass of catchUps) expect(Object.keys(pass.tasks)).toEqual(['pruneHistory']);
    expect(catchUps.reduce((sum, p) => sum + (p.tasks.pruneHistory?.pruned ?? 0), 0)).toBe(19_000);
  });

  it('a pass shares one budget: once the tasks before it spent it, a retention task deletes one batch and is behind', async () => {
    const sluice = db.open({ historyRetentionMs: HOUR });
    await insertHistory(1, 1_000, 2 * HOUR);
    // Each task's own budget is generous; the pass's is 1 ms, spent by the tasks that run first.
    const maintenance = sluice.maintenance({ batchSize: 100, pruneBudgetMs: 600_000, passBudgetMs: 1, jitterMs: 0 });
    const first = await maintenance.runOnce();
    const second = await maintenance.runOnce();
    await maintenance.stop();
    // Every task still ran: the later ones took one step each.
    expect(Object.keys(first.tasks).length).toBe(Object.keys(second.tasks).length);
    expect(first).toMatchObject({ tasks: { pruneHistory: { pruned: 100 } }, behind: ['pruneHistory'] });
    expect(second).toMatchObject({ tasks: { pruneHistory: { pruned: 100 } }, behind: ['pruneHistory'] });
    expect(await history()).toBe(800);
  });

  it('a caught-up run is not behind and no catch-up follows', async () => {
    const sluice = db.open({ historyRetentionMs: HOUR });
    await insertHistory(1, 250, 2 * HOUR);
    const maintenance = sluice.maintenance({ schedule: '0 0 0 1 1 *', jitterMs: 0 });
    const passes: SluiceEventMap['maintenance:completed'][] = [];
    sluice.events.on('maintenance:completed', (e) => passes.push(e));
    await maintenance.start();
    const pass = await maintenance.runOnce();
    // A second explicit pass comes after any catch-up the first could have scheduled.
    await maintenance.runOnce();
    await maintenance.stop();
    expect(pass).toMatchObject({ tasks: { pruneHistory: { pruned: 250 } }, behind: [] });
    expect(passes.map((p) => Object.keys(p.tasks).length > 1)).toEqual([true, true]);
  });
});
