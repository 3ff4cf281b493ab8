import { describe, expect, it } from 'vitest';
import { SluiceMetrics } from '../../src/index.ts';
import { STATEMENTS_PER_SCRAPE } from '../../src/metrics/SluiceMetrics.ts';
import { WorkerCounters } from '../../src/worker/WorkerCounters.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * A scrape costs a fixed number of statements whatever the install holds: the queues' depth comes
 * from the readings the maintenance leader records once per pass, the promises from one read of
 * the queues table, the fleet and everything its workers counted from one read of the registry.
 * Counted through knex's 'query' event, which sees every statement the instance sends.
 */
const db = useTestDatabase('scrape_statements');

/** Every statement `sluice` sends while `fn` runs. */
async function statementsOf(sluice: ReturnType<typeof db.open>, fn: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  const listener = (q: { sql: string }) => seen.push(q.sql.replace(/\s+/g, ' ').trim());
  sluice.knex.on('query', listener);
  try {
    await fn();
  } finally {
    sluice.knex.off('query', listener);
  }
  return seen;
}

/** `jobs` jobs spread over `queues` queues and three priorities, a tenth of them delayed, plus dead ones. */
async function fill(queues: number, jobs: number): Promise<void> {
  const rows: string[] = [];
  const flush = async () => {
    if (rows.length === 0) return;
    await db.query(
      `INSERT INTO sluice_jobs (queue, name, payload, priority, run_at, lock_id, retry_times, created_at) VALUES ${rows.join(', ')}`,
    );
    rows.length = 0;
  };
  for (let i = 0; i < jobs; i++) {
    const delayed = i % 10 === 0 ? '+ INTERVAL 1 HOUR' : '- INTERVAL 1 MINUTE';
    rows.push(
      `('q${String(i % queues).padStart(4, '0')}', 'job-${i % 7}', '{}', ${i % 3}, NOW(3) ${delayed}, '', 0, NOW(3))`,
    );
    if (rows.length === 2_000) await flush();
  }
  await flush();
  await db.query(
    `INSERT INTO sluice_dead_jobs (id, queue, name, payload, priority, retry_times, created_at, failed_at)
     VALUES (900001, 'q0001', 'x', '{}', 0, 3, NOW(3), NOW(3)), (900002, 'q0002', 'x', '{}', 0, 3, NOW(3), NOW(3))`,
  );
}

/** `count` registry rows, each with the metrics a busy worker sends (3 queues, 10 names each). */
async function fleet(count: number): Promise<void> {
  for (let w = 0; w < count; w++) {
    const counters = new WorkerCounters(50);
    for (let q = 0; q < 3; q++)
      for (let i = 0; i < 200; i++) {
        counters.claimed(`q000${q}`, [{ name: `job-${i % 10}`, waitedMs: i * 10 }]);
        counters.outcome(`q000${q}`, `job-${i % 10}`, 'completed', i);
      }
    await db.query(
      `INSERT INTO sluice_workers (id, host, name, pid, queues, started_at, heartbeat_at, heartbeat_interval_ms, concurrency, concurrency_limit, counters, metrics)
       VALUES (?, 'host-a', ?, ?, 'q0000,q0001,q0002', NOW(3), NOW(3), 2000, 10, 10, '{}', ?)`,
      [`w-${w}`, `pm2-${w}`, 1000 + w, counters.snapshot(1)],
    );
  }
}

describe('a scrape', () => {
  it(`reads the database in ${STATEMENTS_PER_SCRAPE} statements, for one small queue as for 300 queues with group defaults, 30,000 jobs and 20 workers`, async () => {
    const sluice = db.open();
    const maintenance = sluice.maintenance({ jitterMs: 0 });
    const metrics = new SluiceMetrics(sluice, 0);
    try {
      await fill(1, 5);
      await maintenance.runOnce();
      const small = await statementsOf(sluice, () => metrics.render());
      // No limited queue: no running jobs of limited queues to count.
      expect(small).toHaveLength(STATEMENTS_PER_SCRAPE - 1);

      await db.query('DELETE FROM sluice_jobs');
      await db.query('DELETE FROM sluice_dead_jobs');
      await fill(300, 30_000);
      await fleet(20);
      // Every queue with a default for its groups, and jobs held for their group: its held count
      // is read in the same statement (it was one more statement per such queue: 304 in all).
      await db.query(
        `INSERT INTO sluice_queues (queue, group_concurrency, updated_at)
         SELECT CONCAT('q', LPAD(seq, 4, '0')), 2, NOW(3) FROM seq_0_to_299`,
      );
      await db.query(
        `INSERT INTO sluice_job_holds (job_id, reason, run_at, queue, group_key, priority)
         SELECT 800000 + seq, 'group', NOW(3), CONCAT('q', LPAD(seq % 300, 4, '0')), 'g', 0 FROM seq_0_to_899`,
      );
      await sluice.queues.setPromise('q0003', { startWithinMs: 1_000 });
      const pass = await statementsOf(sluice, () => maintenance.runOnce());
      const big = await statementsOf(sluice, async () => {
        const text = await metrics.render();
        // What it read is there: 200 queues (the read's bound, in name order) and the (others) sums,
        // the promise, the fleet.
        expect(text.match(/^sluice_jobs\{queue="[^"]+",state="ready"\}/gm)).toHaveLength(201);
        expect(text).toMatch(/^sluice_queue_depth_others 100$/m);
        expect(text).toMatch(/^sluice_queue_promise_broken\{queue="q0003"\} 1$/m);
        expect(text).toMatch(/^sluice_workers 20$/m);
        expect(text.match(/^sluice_job_attempt_duration_seconds_count\{/gm)).toHaveLength(20 * 3 * 10);
        expect(text.match(/^sluice_queue_group_held\{queue="[^"]+"\} 3$/gm)).toHaveLength(300);
      });
      expect(big).toHaveLength(STATEMENTS_PER_SCRAPE);
      // job_holds: the limited queues' read, whose first FROM counts each one's group-held jobs;
      // jobs: their running jobs, over the claimed entries alone.
      expect(big.map((sql) => /FROM `sluice_(\w+)`/.exec(sql)?.[1]).sort()).toEqual([
        'job_holds',
        'jobs',
        'queue_depths',
        'queues',
        'workers',
      ]);
      process.stderr.write(
        `[operations] one scrape: ${small.length} statements (1 queue, 5 jobs), ${big.length} (300 queues, 30,000 jobs, 20 workers); ` +
          `the maintenance pass that read the 300 queues: ${pass.length} statements\n`,
      );
    } finally {
      await maintenance.stop();
    }
  });
});
