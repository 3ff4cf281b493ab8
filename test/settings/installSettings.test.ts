import { describe, expect, it } from 'vitest';
import { OptionsError, type SluiceEventMap } from '../../src/index.ts';
import { countRows } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * docs/operating.md "Retention": the history and dead-job retentions are one setting of the
 * install, stored in its settings table and followed by every process (workers as they start and
 * every half minute, maintenance at every pass); a process given a different value of its own is
 * refused when it starts; an install that stores none keeps the defaults (and a process's own value).
 */
const db = useTestDatabase('install_settings');

const DAY = 24 * 3600 * 1000;

/** `count` history rows finished `agoMs` ago, job ids from `firstId`. */
async function insertHistory(firstId: number, count: number, agoMs: number): Promise<void> {
  const ids = Array.from({ length: count }, (_, i) => firstId + i);
  await db.query(
    `INSERT INTO sluice_job_history (job_id, queue, name, payload, retry_times, batch_id, created_at, finished_at)
     VALUES ${ids.map(() => `(?, 'q', 'ok', '{}', 0, NULL, NOW(3) - INTERVAL ? MICROSECOND, NOW(3) - INTERVAL ? MICROSECOND)`).join(', ')}`,
    ids.flatMap((id) => [id, (agoMs + 1) * 1000, agoMs * 1000]),
  );
}

describe('install settings', () => {
  it('get: the defaults with nothing stored; set stores, validates before writing, and null forgets', async () => {
    const { settings } = db.open();
    expect(await settings.get()).toEqual({ historyRetentionMs: DAY, deadRetentionMs: 7 * DAY, stored: {} });
    expect(await settings.set({ historyRetentionMs: 30_000, deadRetentionMs: Number.POSITIVE_INFINITY })).toEqual({
      historyRetentionMs: 30_000,
      deadRetentionMs: Number.POSITIVE_INFINITY,
      stored: { historyRetentionMs: 30_000, deadRetentionMs: Number.POSITIVE_INFINITY },
    });
    // One bad value: nothing written, not even the good one beside it.
    const bad = settings.set({ deadRetentionMs: 5, historyRetentionMs: -1 });
    await expect(bad).rejects.toBeInstanceOf(OptionsError);
    await expect(bad).rejects.toThrow(/historyRetentionMs must be a whole number of milliseconds/);
    expect((await settings.get()).deadRetentionMs).toBe(Number.POSITIVE_INFINITY);
    expect(await settings.set({ deadRetentionMs: null })).toEqual({
      historyRetentionMs: 30_000,
      deadRetentionMs: 7 * DAY,
      stored: { historyRetentionMs: 30_000 },
    });
  });

  it('maintenance given no retention prunes at the stored one, and follows a change at its next pass', async () => {
    await db.sluice.settings.set({ historyRetentionMs: 60_000 });
    await insertHistory(1, 10, 120_000);
    await insertHistory(100, 5, 10_000);
    const maintenance = db.open().maintenance({ jitterMs: 0 });
    expect(await maintenance.runOnce()).toMatchObject({ tasks: { pruneHistory: { pruned: 10 } } });
    await db.sluice.settings.set({ historyRetentionMs: 5_000 });
    expect(await maintenance.runOnce()).toMatchObject({ tasks: { pruneHistory: { pruned: 5 } } });
    await maintenance.stop();
    expect(await countRows(db, 'sluice_job_history')).toBe(0);
  });

  it('a process given a retention that differs from the stored one is refused as it starts, naming both; the same value is fine', async () => {
    await db.sluice.settings.set({ historyRetentionMs: 30_000 });
    await insertHistory(1, 3, 120_000);
    const other = db.open({ historyRetentionMs: 60_000 });
    const pass = other.maintenance({ jitterMs: 0 }).runOnce();
    await expect(pass).rejects.toBeInstanceOf(OptionsError);
    await expect(pass).rejects.toThrow(
      /historyRetentionMs is 60000 in this process but the install's setting is 30000/,
    );
    const worker = db.open({ historyRetentionMs: 60_000 }).worker({ jobs: [], queues: ['none'] });
    await expect(worker.start()).rejects.toThrow(/historyRetentionMs is 60000/);
    await worker.stop();
    expect(await countRows(db, 'sluice_job_history')).toBe(3); // the refused pass pruned nothing
    const same = db.open({ historyRetentionMs: 30_000 }).maintenance({ jitterMs: 0 });
    expect(await same.runOnce()).toMatchObject({ tasks: { pruneHistory: { pruned: 3 } } });
    await same.stop();
  });

  it('with nothing stored a process follows its own value and says so; a setting stored later wins, and says so', async () => {
    const own = db.open({ historyRetentionMs: 60_000 });
    const seen: (SluiceEventMap['settings:unshared'] | SluiceEventMap['settings:overridden'])[] = [];
    own.events.on('settings:unshared', (e) => seen.push(e));
    own.events.on('settings:overridden', (e) => seen.push(e));
    await insertHistory(1, 4, 120_000);
    await insertHistory(100, 2, 10_000);
    const maintenance = own.maintenance({ jitterMs: 0 });
    expect(await maintenance.runOnce()).toMatchObject({ tasks: { pruneHistory: { pruned: 4 } } });
    expect(seen).toEqual([{ setting: 'historyRetentionMs', given: 60_000 }]);
    await db.sluice.settings.set({ historyRetentionMs: 1_000 });
    expect(await maintenance.runOnce()).toMatchObject({ tasks: { pruneHistory: { pruned: 2 } } });
    expect(seen.at(-1)).toEqual({ setting: 'historyRetentionMs', given: 60_000, stored: 1_000 });
    await maintenance.stop();
  });
});
