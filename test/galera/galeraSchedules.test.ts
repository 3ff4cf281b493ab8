import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ClusterDatabase, clusterDatabase, report, scalarOn } from '../cluster/galeraFleet.ts';
import { sharedCluster } from '../cluster/sharedCluster.ts';

/**
 * Run-time schedules on a 3-node cluster: the fire task run through all three nodes at once, over
 * and over (what two leaders do for a moment at a take-over, here for seconds), fires each tick
 * of each schedule exactly once: the fence on the schedule's row and the tick's idempotency key
 * hold across nodes, where a row lock does not (Galera certifies at commit; a conflict rolls the
 * whole fire back, and it runs again).
 */
let db: ClusterDatabase;

beforeAll(async () => {
  db = await clusterDatabase(await sharedCluster(), 'sluice_schedules');
});

afterAll(async () => {
  await db?.close();
});

const SCHEDULES = 30;
const FIRING_MS = 6_000;

describe('run-time schedules on a 3-node Galera cluster', () => {
  it('fires every tick once while the fire runs through the three nodes at once', async () => {
    for (let s = 0; s < SCHEDULES; s++)
      await db.sluice(0).schedules.upsert({ key: `g-${s}`, job: 'effect', queue: 'sched', every: 1_000 });
    const fires = [0, 1, 2].map((i) => {
      const task = db
        .sluice(i)
        .maintenance({ jitterMs: 0 })
        .tasks.find((t) => t.name === 'fireSchedules');
      if (!task) throw new Error('no fireSchedules task');
      return task;
    });
    let errors = 0;
    const until = performance.now() + FIRING_MS;
    const loop = async (fire: (typeof fires)[number]) => {
      while (performance.now() < until) {
        // A fire that lost its certification every time it ran again fails; the next one fires.
        await fire.runOnce().catch(() => errors++);
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 100));
      }
    };
    await Promise.all(fires.map(loop));
    const node = (i: number) => db.nodes[i] as mysql.Pool;
    const jobs = await scalarOn(node(0), "SELECT COUNT(*) FROM sluice_jobs WHERE queue = 'sched'");
    report(
      `schedules: ${SCHEDULES} every 1 s fired through 3 nodes for ${FIRING_MS} ms: ${jobs} jobs, ${errors} fires failed`,
    );
    // About FIRING_MS / 1 s ticks each (missed ones are skipped, the default).
    expect(jobs).toBeGreaterThanOrEqual(SCHEDULES * 3);
    for (const i of [0, 1, 2]) {
      // No tick made two jobs, on any node.
      expect(
        await scalarOn(
          node(i),
          "SELECT COUNT(*) FROM (SELECT idempotency_key FROM sluice_jobs WHERE queue = 'sched' GROUP BY idempotency_key HAVING COUNT(*) > 1) d",
        ),
      ).toBe(0);
      // Each schedule's runs are its jobs, numbered 1, 2, … without a gap or a repeat.
      expect(
        await scalarOn(
          node(i),
          `SELECT COUNT(*) FROM sluice_schedules s
           WHERE s.runs <> (SELECT COUNT(*) FROM sluice_schedule_runs r WHERE r.schedule_key = s.schedule_key)
              OR s.runs <> (SELECT COUNT(DISTINCT r.seq) FROM sluice_schedule_runs r WHERE r.schedule_key = s.schedule_key)`,
        ),
      ).toBe(0);
      expect(await scalarOn(node(i), 'SELECT COALESCE(SUM(runs), 0) FROM sluice_schedules')).toBe(jobs);
    }
  }, 120_000);
});
