import { describe, expect, it } from 'vitest';
import type { Maintenance, Sluice } from '../../src/index.ts';
import { ago, HOUR, insertJob, jobRow, MINUTE } from '../helpers/factory.ts';
import { type FakeClock, fakeClock } from '../helpers/fakeClock.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

const db = useTestDatabase('leader_lease');

interface Contender {
  sluice: Sluice;
  maintainer: Maintenance;
  changes: string[];
  /** This process's own monotonic clock, moved by the test. */
  clock: FakeClock;
}

/** A maintenance process of its own: its own sluice instance (pool), its own Maintenance, its own clock. */
function contender(options: { poolMax?: number } = {}): Contender {
  const sluice = db.open(options);
  const clock = fakeClock();
  const maintainer = sluice.maintenance({ lockTimeoutMs: 60_000, leaseMs: 30_000, jitterMs: 0, clock: clock.now });
  const changes: string[] = [];
  sluice.events.on('leader:acquired', ({ holder }) => changes.push(`acquired ${holder}`));
  sluice.events.on('leader:lost', ({ holder }) => changes.push(`lost ${holder}`));
  return { sluice, maintainer, changes, clock };
}

async function stopAll(...contenders: Contender[]): Promise<void> {
  await Promise.all(contenders.map((c) => c.maintainer.stop()));
}

describe('leader lease', () => {
  it('lets exactly one of two maintainers lead, pass after pass, even when they run at the same moment', async () => {
    const a = contender();
    const b = contender();
    try {
      const leaders: string[] = [];
      for (let round = 0; round < 10; round++) {
        const [ra, rb] = await Promise.all([a.maintainer.runOnce(), b.maintainer.runOnce()]);
        expect([ra.leader, rb.leader].filter(Boolean), `round ${round}`).toHaveLength(1);
        leaders.push(ra.leader ? 'a' : 'b');
        expect(a.maintainer.leading).toBe(ra.leader);
        expect(b.maintainer.leading).toBe(rb.leader);
      }
      // The leader renews; the other never takes over while the lease is live.
      expect(new Set(leaders).size).toBe(1);
      const [{ holder }] = (await db.query<{ holder: string }>(
        "SELECT holder FROM sluice_leases WHERE name = 'maintenance'",
      )) as [{ holder: string }];
      expect(holder).toBe(leaders[0] === 'a' ? a.maintainer.holder : b.maintainer.holder);
    } finally {
      await stopAll(a, b);
    }
  });

  it('only the leader sweeps', async () => {
    const a = contender();
    const b = contender();
    try {
      const id = await insertJob(db, { lockId: 'dead-host~x.1', lockedAt: ago(2 * HOUR) });
      expect(await a.maintainer.runOnce()).toMatchObject({ leader: true });
      a.clock.advance(MINUTE);
      b.clock.advance(MINUTE);
      expect(await b.maintainer.runOnce()).toMatchObject({ leader: false, changed: 0, tasks: {} });
      expect(await jobRow(db, id)).toMatchObject({ lock_id: 'dead-host~x.1' });
      expect(await a.maintainer.runOnce()).toMatchObject({
        leader: true,
        tasks: { releaseStaleClaims: { claims: 1 } },
      });
    } finally {
      await stopAll(a, b);
    }
  });

  it('hands over at once when the leader stops and gives up its lease', async () => {
    const a = contender();
    const b = contender();
    try {
      expect(await a.maintainer.runOnce()).toMatchObject({ leader: true });
      expect(await b.maintainer.runOnce()).toMatchObject({ leader: false });
      await a.maintainer.stop();
      expect(a.maintainer.leading).toBe(false);
      expect(await db.query("SELECT holder FROM sluice_leases WHERE name = 'maintenance'")).toEqual([{ holder: '' }]);
      expect(await b.maintainer.runOnce()).toMatchObject({ leader: true });
      expect(a.changes).toEqual([`acquired ${a.maintainer.holder}`, `lost ${a.maintainer.holder}`]);
      expect(b.changes).toEqual([`acquired ${b.maintainer.holder}`]);
    } finally {
      await stopAll(a, b);
    }
  });

  it("lets another take over once the lease stood unchanged for leaseMs of the contender's own clock (a leader that died or stalled)", async () => {
    const a = contender();
    const b = contender();
    try {
      expect(await a.maintainer.runOnce()).toMatchObject({ leader: true });
      expect(await b.maintainer.runOnce()).toMatchObject({ leader: false });
      // a stops renewing (it died, or stalls). b has watched the row for just under the lease.
      b.clock.advance(30_000 - 1);
      expect(await b.maintainer.runOnce()).toMatchObject({ leader: false });
      b.clock.advance(1);
      expect(await b.maintainer.runOnce()).toMatchObject({ leader: true });
      // The old leader finds out on its next pass and stays out while b renews.
      expect(await a.maintainer.runOnce()).toMatchObject({ leader: false });
      expect(a.maintainer.leading).toBe(false);
      expect(a.changes).toEqual([`acquired ${a.maintainer.holder}`, `lost ${a.maintainer.holder}`]);
      a.clock.advance(MINUTE);
      b.clock.advance(MINUTE);
      expect(await b.maintainer.runOnce()).toMatchObject({ leader: true });
      expect(await a.maintainer.runOnce()).toMatchObject({ leader: false });
    } finally {
      await stopAll(a, b);
    }
  });

  it("never takes over a renewed lease, whatever its expires_at says against the contender's NOW(3) (a leader's server an hour behind)", async () => {
    const a = contender();
    const b = contender();
    try {
      for (let pass = 0; pass < 4; pass++) {
        expect(await a.maintainer.runOnce()).toMatchObject({ leader: true });
        // a's server writes its times an hour behind b's: by b's clock the lease ran out long ago.
        await db.query("UPDATE sluice_leases SET expires_at = NOW(3) - INTERVAL 1 HOUR WHERE name = 'maintenance'");
        expect(await b.maintainer.runOnce()).toMatchObject({ leader: false });
        a.clock.advance(20_000);
        b.clock.advance(20_000);
      }
      expect(b.changes).toEqual([]);
    } finally {
      await stopAll(a, b);
    }
  });

  it('a leader whose pass stalls for leaseMs of its own clock after its renewal runs no task of it', async () => {
    const a = contender();
    try {
      const id = await insertJob(db, { lockId: 'dead-host~y.1', lockedAt: ago(2 * HOUR) });
      expect(await a.maintainer.runOnce()).toMatchObject({ leader: true });
      a.clock.advance(MINUTE);
      // Give the lease up and take it again, so that leader:acquired — emitted right after the
      // renewal, before the first task — fires: the stall goes there.
      await a.maintainer.stop();
      a.sluice.events.on('leader:acquired', () => a.clock.advance(30_000));
      const pass = await a.maintainer.runOnce();
      expect(pass.leader).toBe(true);
      expect(pass.tasks).toEqual({});
      expect(await jobRow(db, id)).toMatchObject({ lock_id: 'dead-host~y.1', retry_times: 0 });
    } finally {
      await stopAll(a);
    }
  });

  it('writes the lease on the database clock, leaseMs ahead', async () => {
    const sluice = db.open({ poolMax: 1 });
    const maintainer = sluice.maintenance({ leaseMs: 45_000, jitterMs: 0 });
    try {
      await sluice.knex.raw("SET timestamp = UNIX_TIMESTAMP('2031-05-06 07:08:09.123')");
      expect(await maintainer.runOnce()).toMatchObject({ leader: true });
      expect(await db.query("SELECT holder, expires_at FROM sluice_leases WHERE name = 'maintenance'")).toEqual([
        { holder: maintainer.holder, expires_at: new Date('2031-05-06T07:08:54.123Z') },
      ]);
    } finally {
      await sluice.knex.raw('SET timestamp = DEFAULT');
      await maintainer.stop();
    }
  });

  it('takes a lease created or released in the same millisecond (no wait for the clock to tick)', async () => {
    // Each contender runs on one connection whose clock is pinned, so every NOW(3) it reads is equal.
    const a = contender({ poolMax: 1 });
    const b = contender({ poolMax: 1 });
    try {
      for (const c of [a, b]) await c.sluice.knex.raw("SET timestamp = UNIX_TIMESTAMP('2031-05-06 07:08:09.123')");
      // A fresh lease row: created and acquired at the same instant.
      expect(await a.maintainer.runOnce()).toMatchObject({ leader: true });
      expect(await b.maintainer.runOnce()).toMatchObject({ leader: false });
      // Released and re-acquired at the same instant.
      await a.maintainer.stop();
      expect(await b.maintainer.runOnce()).toMatchObject({ leader: true });
    } finally {
      for (const c of [a, b]) await c.sluice.knex.raw('SET timestamp = DEFAULT');
      await stopAll(a, b);
    }
  });
});
