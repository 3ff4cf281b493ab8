import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobSpec } from '../../src/index.ts';
import {
  type ClusterDatabase,
  clusterDatabase,
  conflictsSoFar,
  failureCounts,
  report,
  scalarOn,
  startWorker,
  stopAll,
  waitDrained,
} from '../cluster/galeraFleet.ts';
import { sharedCluster } from '../cluster/sharedCluster.ts';

/**
 * Flow control on a 3-node cluster: limits hold across workers on every node, observed from the
 * handlers' own spans (the `span` fixture writes each run's start and end through node 1 with node
 * 1's NOW(6): one clock for runs on all three nodes), with the certification conflicts they cost
 * counted and printed. Each case is a drain (`drainSpans`) and a count over its spans
 * (`mostAtOnce`, per key): a per-group limit is the same drain with `group` on its jobs, counted by
 * `s => s.grp`.
 */
const DRAIN_TIMEOUT_MS = 300_000;

let db: ClusterDatabase;

beforeAll(async () => {
  db = await clusterDatabase(await sharedCluster(), 'sluice_limits');
  await db.nodes[0]?.query(`CREATE TABLE galera_spans (
    id         BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    job_id     BIGINT UNSIGNED NOT NULL,
    pid        INT NOT NULL,
    grp        VARCHAR(64) NOT NULL,
    started_at DATETIME(6) NOT NULL,
    ended_at   DATETIME(6) NULL,
    KEY ix_job (job_id)
  ) ENGINE=InnoDB`);
});

afterAll(async () => {
  await db?.close();
});

interface Span {
  readonly job_id: number;
  readonly pid: number;
  readonly grp: string;
  /** Microseconds on node 1's clock. */
  readonly started: number;
  readonly ended: number;
}

/**
 * Enqueues `jobs` (of `span`, on `queue`) through node 1 while a worker on each node (concurrency
 * `concurrency`) drains the queue; returns the spans of that queue's jobs, what the drain cost in
 * certification conflicts, and the failures counted against jobs.
 */
async function drainSpans(queue: string, jobs: readonly JobSpec[], concurrency = 4) {
  const clock = { SLUICE_GALERA_CLOCK_URL: db.urls[0] as string };
  const workers = [0, 1, 2].map((node) => startWorker(db, { node, queues: queue, concurrency, env: clock }));
  try {
    await Promise.all(workers.map((w) => w.ready));
    const conflictsBefore = await conflictsSoFar(db);
    const started = performance.now();
    const { batchId } = await db.sluice(0).enqueueBatch(jobs.map((j) => ({ ...j, queue })));
    await waitDrained(db, queue, { timeoutMs: DRAIN_TIMEOUT_MS });
    const seconds = (performance.now() - started) / 1000;
    const conflicts = (await conflictsSoFar(db)) - conflictsBefore;
    const finished = await scalarOn(db.nodes[2]!, 'SELECT COUNT(*) FROM sluice_job_history WHERE batch_id = ?', [
      batchId,
    ]);
    const [rows] = (await db.nodes[0]!.query(
      `SELECT s.job_id, s.pid, s.grp,
              TIMESTAMPDIFF(MICROSECOND, '2000-01-01', s.started_at) AS started,
              TIMESTAMPDIFF(MICROSECOND, '2000-01-01', s.ended_at) AS ended
       FROM galera_spans s
       JOIN sluice_job_history h ON h.job_id = s.job_id AND h.batch_id = ?
       ORDER BY s.started_at`,
      [batchId],
    )) as unknown as [Span[]];
    const spans = rows.map((r) => ({ ...r, started: Number(r.started), ended: Number(r.ended) }));
    return { spans, finished, seconds, conflicts, counts: failureCounts(workers) };
  } finally {
    await stopAll(workers);
  }
}

/** Pure: the most runs at once among those with the same key (an end before a start at one instant). */
function mostAtOnce(spans: readonly Span[], keyOf: (s: Span) => string = () => ''): number {
  const byKey = new Map<string, [number, number][]>();
  for (const s of spans) {
    const edges = byKey.get(keyOf(s)) ?? [];
    edges.push([s.started, 1], [s.ended, -1]);
    byKey.set(keyOf(s), edges);
  }
  let most = 0;
  for (const edges of byKey.values()) {
    edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    let now = 0;
    for (const [, step] of edges) {
      now += step;
      most = Math.max(most, now);
    }
  }
  return most;
}

describe('flow control on a 3-node Galera cluster', () => {
  it('a queue capped at 1, drained by workers on all three nodes: never two at once, every job once', async () => {
    const JOBS = 60;
    await db.sluice(1).queues.setLimits('capped', { concurrency: 1 });
    const jobs = Array.from({ length: JOBS }, () => ({ name: 'span', payload: { ms: 50 } }));
    const { spans, finished, seconds, conflicts, counts } = await drainSpans('capped', jobs);
    report(
      `cap 1 across 3 nodes: ${JOBS} jobs in ${seconds.toFixed(1)} s, most at once ${mostAtOnce(spans)}, ` +
        `processes that ran jobs ${new Set(spans.map((s) => s.pid)).size}; ` +
        `certification conflicts (wsrep_local_cert_failures + wsrep_local_bf_aborts): ${conflicts}; ` +
        `counted against jobs: ${JSON.stringify(counts)}`,
    );
    expect({ finished, runs: spans.length, jobs: new Set(spans.map((s) => s.job_id)).size }).toEqual({
      finished: JOBS,
      runs: JOBS,
      jobs: JOBS,
    });
    expect(spans.every((s) => s.ended >= s.started)).toBe(true);
    expect(mostAtOnce(spans)).toBe(1);
    expect(new Set(spans.map((s) => s.pid)).size).toBeGreaterThan(1);
    expect(counts).toMatchObject({ failed: 0, retried: 0, dead: 0, workerErrors: 0, claimsLost: 0 });
  });

  it('two groups limited to 1 each, drained by workers on all three nodes: never two of a group at once', async () => {
    const PER_GROUP = 30;
    // The limit rides on each job (a group's own row, last write wins), as an app would give it.
    const jobs = ['a', 'b'].flatMap((group) =>
      Array.from({ length: PER_GROUP }, () => ({
        name: 'span',
        payload: { ms: 50, group },
        group,
        groupLimits: { concurrency: 1 },
      })),
    );
    // Concurrency 1 per worker: a worker busy with one group's job leaves the other group's to a
    // worker on another node, so the two groups' rows are written from different nodes.
    const { spans, finished, seconds, conflicts, counts } = await drainSpans('grouped', jobs, 1);
    const perGroup = Object.fromEntries(['a', 'b'].map((g) => [g, mostAtOnce(spans.filter((s) => s.grp === g))]));
    report(
      `group limit 1 (two groups) across 3 nodes: ${jobs.length} jobs in ${seconds.toFixed(1)} s, ` +
        `most at once per group ${JSON.stringify(perGroup)}, across groups ${mostAtOnce(spans)}, ` +
        `processes that ran jobs ${new Set(spans.map((s) => s.pid)).size}; ` +
        `certification conflicts (wsrep_local_cert_failures + wsrep_local_bf_aborts): ${conflicts}; ` +
        `counted against jobs: ${JSON.stringify(counts)}`,
    );
    expect({ finished, runs: spans.length, jobs: new Set(spans.map((s) => s.job_id)).size }).toEqual({
      finished: jobs.length,
      runs: jobs.length,
      jobs: jobs.length,
    });
    expect(spans.every((s) => s.ended >= s.started)).toBe(true);
    expect(mostAtOnce(spans, (s) => s.grp)).toBe(1);
    expect(perGroup).toEqual({ a: 1, b: 1 });
    expect(new Set(spans.map((s) => s.pid)).size).toBeGreaterThan(1);
    expect(counts).toMatchObject({ failed: 0, retried: 0, dead: 0, workerErrors: 0, claimsLost: 0 });
    // Every slot came back (read on the node that saw the queue drained: a job's delete and its
    // group's slot are one transaction).
    expect(
      await scalarOn(db.nodes[0]!, "SELECT COALESCE(SUM(active), 0) FROM sluice_job_groups WHERE queue = 'grouped'"),
    ).toBe(0);
  });
});
