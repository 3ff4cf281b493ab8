import { describe, expect, it } from 'vitest';
import { SluiceMetrics } from '../../src/index.ts';
import { STATEMENTS_PER_SCRAPE } from '../../src/metrics/SluiceMetrics.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * 1,500 queues: the maintenance pass reads the first 200 in name order and the promised one one by
 * one, and sums the 1,299 others into one reading, queue="(others)", which the metrics show beside
 * `sluice_queue_depth_others` (how many queues it sums). Before, the queues past the 200th had no
 * series and nothing said so.
 */
const db = useTestDatabase('others_series');

/** Sample values of `name` by their label text. */
function samples(text: string, name: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of text.matchAll(new RegExp(`^${name}(\\{[^}]*\\})? (\\S+)$`, 'gm'))) out.set(m[1] ?? '', Number(m[2]));
  return out;
}

describe('1,500 queues in the metrics', () => {
  it('sums the queues past the ones read one by one under queue="(others)", and says how many', async () => {
    // One job per queue: due, but every tenth delayed an hour; three dead jobs in the last queue.
    await db.query(
      `INSERT INTO sluice_jobs (queue, name, payload, priority, run_at, created_at)
       SELECT CONCAT('q', LPAD(seq, 5, '0')), 'work', '{}', 0,
              IF(seq % 10 = 0, NOW(3) + INTERVAL 1 HOUR, NOW(3) - INTERVAL 1 SECOND), NOW(3)
       FROM seq_1_to_1500`,
    );
    await db.query(
      `INSERT INTO sluice_dead_jobs (id, queue, name, payload, priority, retry_times, created_at, failed_at)
       SELECT 900000 + seq, 'q01500', 'x', '{}', 0, 3, NOW(3), NOW(3) FROM seq_1_to_3`,
    );
    await db.sluice.queues.setPromise('q01400', { startWithinMs: 60_000 });
    const sluice = db.open();
    const maintenance = sluice.maintenance({ jitterMs: 0 });
    try {
      await maintenance.runOnce();
    } finally {
      await maintenance.stop();
    }
    const metrics = new SluiceMetrics(sluice, 0);
    let statements = 0;
    const count = () => {
      statements++;
    };
    sluice.knex.on('query', count);
    const text = await metrics.render().finally(() => sluice.knex.off('query', count));
    // No limited queue here: no running jobs of limited queues to count.
    expect(statements).toBe(STATEMENTS_PER_SCRAPE - 1);

    const jobs = samples(text, 'sluice_jobs');
    // 200 listed queues, the promised one, and the (others) sums.
    expect([...jobs.keys()].filter((k) => k.includes('state="ready"'))).toHaveLength(202);
    expect(jobs.get('{queue="q01400",state="delayed"}')).toBe(1);
    // q00201…q01500 but q01400: 1,299 queues, 1,170 ready and 129 delayed.
    expect(samples(text, 'sluice_queue_depth_others').get('')).toBe(1_299);
    expect(jobs.get('{queue="(others)",state="ready"}')).toBe(1_170);
    expect(jobs.get('{queue="(others)",state="delayed"}')).toBe(129);
    expect(jobs.get('{queue="(others)",state="running"}')).toBe(0);
    expect(samples(text, 'sluice_dead_jobs').get('{queue="(others)"}')).toBe(3);
    expect(samples(text, 'sluice_queue_oldest_ready_seconds').has('{queue="(others)"}')).toBe(false);

    // The recorded reading says the same through the API.
    const [others] = await sluice.queues.recordedDepth({ maxQueues: 1 });
    expect(others).toMatchObject({ queue: '(others)', queues: { count: 1_299, exact: true } });
  });

  it('says which read of the scrape was cut: 1,001 limited queues and 1,001 promises', async () => {
    await db.query(
      `INSERT INTO sluice_queues (queue, concurrency_cap, promise_max_ready, updated_at)
       SELECT CONCAT('l', LPAD(seq, 5, '0')), 3, 100, NOW(3) FROM seq_1_to_1001`,
    );
    const cut = async () => samples(await new SluiceMetrics(db.sluice, 0).render(), 'sluice_metrics_cut');
    expect(Object.fromEntries(await cut())).toEqual({
      '{read="depths"}': 0,
      '{read="promises"}': 1,
      '{read="limits"}': 1,
    });
    // 999 of each: every one has its series.
    await db.query(`DELETE FROM sluice_queues WHERE queue IN ('l01000', 'l01001')`);
    expect(Object.fromEntries(await cut())).toMatchObject({ '{read="promises"}': 0, '{read="limits"}': 0 });
  });
});
