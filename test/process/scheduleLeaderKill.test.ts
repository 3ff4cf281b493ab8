import { describe, expect, it } from 'vitest';
import { type SluiceProcess, spawnMaintenance } from '../helpers/spawnSluice.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';

/**
 * docs/schedules.md "Exactly once": three real maintenance processes fire 200 every-second
 * run-time schedules; the leader is SIGKILLed while one of its fire transactions is open. Each
 * schedule must have exactly one job per tick, no tick twice and none missing (missed: 'all'
 * fires the ticks of the take-over gap).
 */
const db = useTestDatabase('schedule_leader_kill');
const SCHEDULES = 200;

interface Fired {
  key: string;
  tick: number;
}

async function fired(): Promise<Fired[]> {
  const rows = await db.query<{ idempotency_key: string }>(
    "SELECT idempotency_key FROM sluice_jobs WHERE name = 'beat' ORDER BY id",
  );
  return rows.map(({ idempotency_key: k }) => {
    const at = k.lastIndexOf('@');
    return { key: k.slice('sluice:schedule:'.length, at), tick: Date.parse(k.slice(at + 1)) };
  });
}

async function leaseHolder(): Promise<string | undefined> {
  const [row] = await db.query<{ holder: string }>("SELECT holder FROM sluice_leases WHERE name = 'maintenance'");
  return row?.holder;
}

/** Whether a transaction of this database holds row locks of a fire (its jobs, runs or schedules). */
async function fireOpen(): Promise<boolean> {
  const rows = await db.query(
    `SELECT t.trx_id FROM information_schema.innodb_trx t
     JOIN information_schema.processlist p ON p.id = t.trx_mysql_thread_id
     WHERE p.db = ? AND t.trx_rows_locked > 0`,
    [db.name],
  );
  return rows.length > 0;
}

describe('run-time schedules across a leader killed mid-fire (three real maintenance processes)', () => {
  it('fires every tick of every schedule exactly once', async () => {
    for (let i = 0; i < SCHEDULES; i++) {
      await db.sluice.schedules.upsert({ key: `beat-${i}`, job: 'beat', every: 1_000, missed: 'all' });
    }
    const processes: SluiceProcess[] = [0, 1, 2].map(() =>
      spawnMaintenance(db.url, { leaseMs: 3_000, jitterMs: 100, schedule: '* * * * * *' }),
    );
    await Promise.all(processes.map((p) => p.ready));
    await waitFor(async () => (await fired()).length >= SCHEDULES * 3, {
      what: 'three ticks fired',
      timeoutMs: 30_000,
    });
    const holder = await leaseHolder();
    const leader = processes.find((p) => holder?.includes(`-${p.pid}~`));
    expect(leader, `lease holder ${holder}`).toBeDefined();
    // Kill it while a fire of its is open (or, failing that within 10 s, at once).
    await waitFor(fireOpen, { intervalMs: 2, timeoutMs: 10_000, what: 'a fire transaction open' }).catch(() => false);
    leader!.kill('SIGKILL');
    await leader!.exited;
    const before = (await fired()).length;
    await waitFor(async () => (await leaseHolder()) !== holder, { what: 'a new leader', timeoutMs: 30_000 });
    await waitFor(async () => (await fired()).length >= before + SCHEDULES * 3, {
      what: 'three more ticks after the take-over',
      timeoutMs: 30_000,
    });
    await Promise.all(processes.filter((p) => p !== leader).map((p) => p.stop()));

    const byKey = new Map<string, number[]>();
    for (const { key, tick } of await fired()) byKey.set(key, [...(byKey.get(key) ?? []), tick]);
    expect(byKey.size).toBe(SCHEDULES);
    for (const [key, ticks] of byKey) {
      const sorted = [...ticks].sort((a, b) => a - b);
      expect(new Set(sorted).size, `${key}: a tick fired twice`).toBe(sorted.length);
      for (let i = 1; i < sorted.length; i++) {
        expect(
          sorted[i]! - sorted[i - 1]!,
          `${key}: a tick missing after ${new Date(sorted[i - 1]!).toISOString()}`,
        ).toBe(1_000);
      }
      const s = await db.sluice.schedules.get(key);
      expect(s!.runs, key).toBe(sorted.length);
      expect(s!.lastTickAt!.getTime(), key).toBe(sorted[sorted.length - 1]);
    }
  });
});
