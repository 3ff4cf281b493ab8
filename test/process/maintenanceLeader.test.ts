import { describe, expect, it } from 'vitest';
import { jobRow } from '../helpers/factory.ts';
import { taskCount } from '../helpers/maintenanceLog.ts';
import { type LogLine, type SluiceProcess, spawnMaintenance } from '../helpers/spawnSluice.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';

/**
 * Two `sluice sweep` processes at once (as when PM2 restarts one, or an operator starts a second
 * by mistake): the lease row lets exactly one lead each tick; when the leader dies without
 * releasing (SIGKILL), the other takes over once the lease expires. Stale claims are released by
 * whichever process leads at the time.
 */
const db = useTestDatabase('process_leader');
const LEASE_MS = 3_000;
const QUEUE = 'leader';

function sweeper(): SluiceProcess {
  return spawnMaintenance(db.url, { leaseMs: LEASE_MS, lockTimeoutMs: 2_000, jitterMs: 200 });
}

/** A job claimed an hour ago by a process that is long gone. */
async function plantStaleClaim(n: number): Promise<number> {
  const { id } = await db.sluice.enqueue({ name: 'record', queue: QUEUE, payload: { n } });
  await db.query(`UPDATE sluice_jobs SET lock_id = ?, locked_at = NOW(3) - INTERVAL 1 HOUR WHERE id = ?`, [
    `ghost-${n}~dead.1`,
    id,
  ]);
  return id;
}

async function leaseHolder(): Promise<string | undefined> {
  const [row] = await db.query<{ holder: string }>(`SELECT holder FROM sluice_leases WHERE name = 'maintenance'`);
  return row?.holder;
}

const sweeps = (p: SluiceProcess) => p.events('maintenance:completed');
const leading = (p: SluiceProcess) => sweeps(p).filter((l) => l.leader === true);

/** Per one-second cron tick (each line's own clock; both processes share this host's), the holders that swept as leader. */
function leadersPerTick(lines: LogLine[]): Map<number, Set<string>> {
  const ticks = new Map<number, Set<string>>();
  for (const l of lines) {
    if (l.event !== 'maintenance:completed' || l.leader !== true) continue;
    const tick = Math.floor(l.time / 1000);
    const holders = ticks.get(tick) ?? new Set<string>();
    holders.add(l.holder as string);
    ticks.set(tick, holders);
  }
  return ticks;
}

describe('maintenance leadership (two real sweep processes)', () => {
  it('one leads at a time; when the leader is SIGKILLed the other takes over after the lease; the leader releases stale claims', async () => {
    const first = await plantStaleClaim(1);
    const a = sweeper();
    const b = sweeper();
    await Promise.all([a.ready, b.ready]);

    // Several ticks with both alive.
    await waitFor(() => sweeps(a).length >= 4 && sweeps(b).length >= 4, {
      what: 'four sweep ticks in each process',
      timeoutMs: 20_000,
    });
    const holders = new Set([...leading(a), ...leading(b)].map((l) => l.holder as string));
    expect(holders.size, `${a.describe()}\n${b.describe()}`).toBe(1);
    const [leader, follower] = leading(a).length > 0 ? [a, b] : [b, a];
    const leaderHolder = (await leader.waitForLine((l) => l.event === 'leader:acquired', 0, 'leader:acquired'))
      .holder as string;
    expect([...holders]).toEqual([leaderHolder]);
    expect(leaderHolder).toContain(`-${leader.pid}~`);
    // The other process ticked too, and was refused every time.
    expect(sweeps(follower).length).toBeGreaterThanOrEqual(4);
    expect(sweeps(follower).every((l) => l.leader === false)).toBe(true);
    expect(follower.events('leader:acquired')).toEqual([]);
    expect(await leaseHolder()).toBe(leaderHolder);

    // The leader released the planted stale claim, once.
    await waitFor(
      async () =>
        (await jobRow<{ lock_id: string; retry_times: number }>(db, first, 'lock_id, retry_times'))?.lock_id === '',
      { what: `stale claim on job ${first} released` },
    );
    expect(await jobRow<{ lock_id: string; retry_times: number }>(db, first, 'lock_id, retry_times')).toEqual({
      lock_id: '',
      retry_times: 1,
    });
    const released = await leader.waitForLine(
      (l) => l.event === 'maintenance:completed' && taskCount(l, 'releaseStaleClaims', 'claims') === 1,
      10_000,
      'the sweep that released it',
    );
    expect(released).toMatchObject({ holder: leaderHolder, leader: true });
    expect(sweeps(follower).every((l) => taskCount(l, 'releaseStaleClaims', 'claims') === 0)).toBe(true);

    // The leader dies without giving the lease up; the follower takes over once it expires.
    leader.kill('SIGKILL');
    expect(await leader.exited).toEqual({ code: null, signal: 'SIGKILL' });
    const second = await plantStaleClaim(2);
    const acquired = await follower.waitForLine(
      (l) => l.event === 'leader:acquired',
      LEASE_MS + 15_000,
      'leader:acquired after the takeover',
    );
    const followerHolder = acquired.holder as string;
    expect(followerHolder).toContain(`-${follower.pid}~`);
    expect(followerHolder).not.toBe(leaderHolder);
    await follower.waitForLine(
      (l) =>
        l.event === 'maintenance:completed' && l.leader === true && taskCount(l, 'releaseStaleClaims', 'claims') === 1,
      10_000,
      'the new leader releasing the second stale claim',
    );
    expect(await jobRow<{ lock_id: string; retry_times: number }>(db, second, 'lock_id, retry_times')).toEqual({
      lock_id: '',
      retry_times: 1,
    });
    expect(await jobRow<{ lock_id: string; retry_times: number }>(db, first, 'lock_id, retry_times')).toEqual({
      lock_id: '',
      retry_times: 1,
    }); // a free job is not the sweeper's business
    expect(await leaseHolder()).toBe(followerHolder);

    // Over the whole run, never two leaders in the same tick.
    for (const [tick, tickHolders] of leadersPerTick([...a.lines, ...b.lines])) {
      expect(tickHolders.size, `tick ${new Date(tick * 1000).toISOString()}: ${[...tickHolders].join(', ')}`).toBe(1);
    }

    // A graceful stop gives the lease up at once.
    expect(await follower.stop(), follower.describe()).toEqual({ code: 0, signal: null });
    expect(await leaseHolder()).toBe('');
  });
});
