import { beforeAll, describe, expect, it } from 'vitest';
import { createFixtureTables } from '../fixtures/fixtureTables.ts';
import { countRows } from '../helpers/factory.ts';
import { type SluiceProcess, spawnMaintenance, spawnWorker } from '../helpers/spawnSluice.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';

/**
 * docs/flow-control.md "Per-group concurrency": a group's limit holds across real worker processes,
 * observed from the handlers' own timestamps (the `timed` fixture writes each run's start and
 * finish by its process's clock), never from what sluice reports; also while workers are SIGKILLed
 * and respawned, and no slot leaks: at the end every group's count of slots taken is 0.
 */
const db = useTestDatabase('process_group_concurrency');
const QUEUE = 'grouped';

beforeAll(() => createFixtureTables(db));

interface Span {
  pid: number;
  job_id: number;
  started_ms: number;
  finished_ms: number | null;
}

const spans = () => db.query<Span>('SELECT pid, job_id, started_ms, finished_ms FROM test_spans ORDER BY started_ms');

/** Pure: the most runs of one group at once; a run that never finished ends at its process's death. */
function mostAtOnce(runs: readonly Span[], diedAt: ReadonlyMap<number, number>): number {
  const edges: [number, number][] = [];
  for (const r of runs) {
    const end = r.finished_ms ?? diedAt.get(r.pid);
    if (end === undefined) throw new Error(`job ${r.job_id} in ${r.pid} never finished, and its process did not die`);
    edges.push([Number(r.started_ms), 1], [Number(end), -1]);
  }
  // At the same instant an end comes before a start: the next job started as the last one ended.
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let most = 0;
  for (const [, step] of edges) {
    now += step;
    most = Math.max(most, now);
  }
  return most;
}

/** 5 groups of limit 1 and one of limit 3, `perGroup` jobs each, interleaved; returns each job's group. */
async function enqueueGroups(perGroup: number, ms: number): Promise<Map<number, string>> {
  const groups = ['a', 'b', 'c', 'd', 'e', 'wide'];
  const specs = [];
  for (let i = 0; i < perGroup; i++) {
    for (const group of groups) {
      specs.push({
        name: 'timed',
        queue: QUEUE,
        payload: { ms },
        group,
        groupLimits: { concurrency: group === 'wide' ? 3 : 1 },
      });
    }
  }
  await db.sluice.enqueueBatch(specs);
  const rows = await db.query<{ id: number; group_key: string }>('SELECT id, group_key FROM sluice_jobs');
  return new Map(rows.map((r) => [Number(r.id), r.group_key]));
}

/** The most runs at once of each group. */
function overlapByGroup(
  runs: readonly Span[],
  groupOf: ReadonlyMap<number, string>,
  diedAt: ReadonlyMap<number, number>,
): Record<string, number> {
  const byGroup = new Map<string, Span[]>();
  for (const r of runs) {
    const group = groupOf.get(Number(r.job_id)) as string;
    byGroup.set(group, [...(byGroup.get(group) ?? []), r]);
  }
  return Object.fromEntries([...byGroup].sort().map(([g, rs]) => [g, mostAtOnce(rs, diedAt)]));
}

function worker(lockTimeoutMs?: number): SluiceProcess {
  return spawnWorker(
    db.url,
    {
      queues: QUEUE,
      concurrency: 4,
      pollIntervalMs: 200,
      heartbeatIntervalMs: 200,
      ...(lockTimeoutMs ? { lockTimeoutMs } : {}),
    },
    { logLevel: 'info' },
  );
}

async function slotsTaken(): Promise<number> {
  const [row] = await db.query<{ n: number | null }>('SELECT SUM(active) AS n FROM sluice_job_groups');
  return Number(row?.n ?? 0);
}

describe('per-group concurrency across worker processes', () => {
  it('4 worker processes: a limit-1 group never runs two at once, a limit-3 group at most 3, each job once', async () => {
    const fleet = Array.from({ length: 4 }, () => worker());
    await Promise.all(fleet.map((w) => w.ready));
    const groupOf = await enqueueGroups(50, 10);
    await waitFor(async () => (await countRows(db, 'sluice_jobs')) === 0, {
      what: 'the groups drained',
      timeoutMs: 240_000,
    });
    await Promise.all(fleet.map((w) => w.stop()));
    const runs = await spans();
    expect(runs).toHaveLength(300);
    expect(new Set(runs.map((r) => Number(r.job_id))).size).toBe(300);
    expect(new Set(runs.map((r) => r.pid)).size).toBeGreaterThan(1);
    const overlaps = overlapByGroup(runs, groupOf, new Map());
    console.log('group overlaps (4 workers):', JSON.stringify(overlaps));
    expect(overlaps).toMatchObject({ a: 1, b: 1, c: 1, d: 1, e: 1 });
    expect(overlaps.wide).toBeLessThanOrEqual(3);
    expect(overlaps.wide).toBeGreaterThan(1);
    expect(await slotsTaken()).toBe(0);
  });

  it('under a SIGKILL storm the limits hold, no job is lost and no slot leaks', async () => {
    const sweeper = spawnMaintenance(
      db.url,
      { lockTimeoutMs: 2_000, jitterMs: 100, missedHeartbeats: 3 },
      { logLevel: 'info' },
    );
    let fleet = Array.from({ length: 4 }, () => worker(2_000));
    await Promise.all([sweeper.ready, ...fleet.map((w) => w.ready)]);
    const groupOf = await enqueueGroups(40, 300);
    const diedAt = new Map<number, number>();
    let kills = 0;
    const stormEnds = Date.now() + 20_000;
    while (Date.now() < stormEnds && (await countRows(db, 'sluice_jobs')) > 0) {
      await new Promise((resolve) => setTimeout(resolve, 1_000 + Math.random() * 1_000));
      const victim = fleet[Math.floor(Math.random() * fleet.length)] as SluiceProcess;
      victim.kill('SIGKILL');
      expect((await victim.exited).signal).toBe('SIGKILL');
      diedAt.set(victim.pid, Date.now());
      kills++;
      // Respawned without waiting for it to be ready: the storm goes on while it starts.
      fleet = [...fleet.filter((w) => w !== victim), worker(2_000)];
    }
    await waitFor(async () => (await countRows(db, 'sluice_jobs')) === 0, {
      what: 'the groups drained after the storm',
      timeoutMs: 240_000,
    });
    // The last releases by the maintenance process: the slots of the last jobs are given back.
    await waitFor(async () => (await slotsTaken()) === 0, { what: 'every slot given back', timeoutMs: 60_000 });
    await Promise.all(fleet.map((w) => w.ready));
    await Promise.all([...fleet, sweeper].map((w) => w.stop()));
    const runs = await spans();
    const finished = new Set(runs.filter((r) => r.finished_ms !== null).map((r) => Number(r.job_id)));
    expect(finished.size).toBe(240);
    expect(kills).toBeGreaterThanOrEqual(3);
    const overlaps = overlapByGroup(runs, groupOf, diedAt);
    console.log(`group overlaps (SIGKILL storm, ${kills} kills, ${runs.length} runs):`, JSON.stringify(overlaps));
    expect(overlaps).toMatchObject({ a: 1, b: 1, c: 1, d: 1, e: 1 });
    expect(overlaps.wide).toBeLessThanOrEqual(3);
    expect(await countRows(db, 'sluice_job_holds')).toBe(0);
  });

  it('jobs enqueued while the group drains (4 enqueuers at once) keep the limit and leave no slot', async () => {
    const fleet = Array.from({ length: 4 }, () => worker());
    await Promise.all(fleet.map((w) => w.ready));
    const enqueuer = async (k: number) => {
      for (let batch = 0; batch < 10; batch++) {
        await db.sluice.enqueueBatch(
          Array.from({ length: 5 }, (_, i) => ({
            name: 'timed',
            queue: QUEUE,
            payload: { ms: 5, k, batch, i },
            group: i % 2 === 0 ? 'a' : 'b',
            groupLimits: { concurrency: 1 },
          })),
        );
        await db.sluice.enqueue({ name: 'timed', queue: QUEUE, payload: { ms: 5 }, group: 'a' });
      }
    };
    await Promise.all([0, 1, 2, 3].map(enqueuer));
    await waitFor(async () => (await countRows(db, 'sluice_jobs')) === 0, {
      what: 'the groups drained',
      timeoutMs: 240_000,
    });
    await Promise.all(fleet.map((w) => w.stop()));
    const groupOf = new Map<number, string>();
    for (const r of await db.query<{ id: number; i: string | null }>(
      `SELECT job_id AS id, JSON_EXTRACT(payload, '$.i') AS i FROM sluice_job_history`,
    ))
      groupOf.set(Number(r.id), r.i === null || Number(r.i) % 2 === 0 ? 'a' : 'b');
    expect(groupOf.size).toBe(240);
    const overlaps = overlapByGroup(await spans(), groupOf, new Map());
    console.log('group overlaps (enqueued while draining):', JSON.stringify(overlaps));
    expect(overlaps).toEqual({ a: 1, b: 1 });
    expect(await slotsTaken()).toBe(0);
    expect(await countRows(db, 'sluice_job_holds')).toBe(0);
  });
});
