import { describe, expect, it } from 'vitest';
import type { SluiceEventMap } from '../../src/index.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * Every promise judged within the stated passes, whatever the shape: 1,200 live queues that sort first, and
 * 1,101 promised queues (more than one read of promises returns). Two of them are late — 30 jobs
 * ready for 12 s against a promise of 2 s: `p00050`, past the 200 queues a pass lists, and
 * `zz-late`, past the first 1,000 promises too. Before, the pass read p00050's depth through a
 * reader that assumed consecutive names (it read as 0 ready: "kept"), and never read zz-late's
 * promise at all (the first 1,000 only).
 */
const db = useTestDatabase('many_promises');

async function seed(): Promise<void> {
  await db.query(
    `INSERT INTO sluice_jobs (queue, name, payload, priority, run_at, created_at)
     SELECT CONCAT('a', LPAD(seq, 5, '0')), 'work', '{}', seq % 2, NOW(3), NOW(3) FROM seq_1_to_1200`,
  );
  await db.query(
    `INSERT INTO sluice_queues (queue, promise_start_within_ms, updated_at)
     SELECT CONCAT('p', LPAD(seq, 5, '0')), IF(seq = 50, 2000, 60000), NOW(3) FROM seq_1_to_1100`,
  );
  await db.sluice.queues.setPromise('zz-late', { startWithinMs: 2_000 });
  for (const queue of ['p00050', 'zz-late'])
    await db.query(
      `INSERT INTO sluice_jobs (queue, name, payload, priority, run_at, created_at)
       SELECT ?, 'work', '{}', seq % 3, NOW(3) - INTERVAL 12 SECOND, NOW(3) FROM seq_1_to_30`,
      [queue],
    );
}

describe('1,200 queues and 1,101 promises', () => {
  it('passes judge every promise: the late queues past the 200th queue and the 1,000th promise break theirs', async () => {
    await seed();
    const sluice = db.open();
    const broken: SluiceEventMap['promise:broken'][] = [];
    sluice.events.on('promise:broken', (e) => broken.push(e));
    const maintenance = sluice.maintenance({ jitterMs: 0 });
    let statements = 0;
    const count = () => {
      statements++;
    };
    sluice.knex.on('query', count);
    try {
      // Within ceil(1,301 queues ÷ 100) = 14 passes, one while a pass's 1 s budget allows.
      let passes = 0;
      while (broken.length < 2 && passes < 14) {
        await maintenance.runOnce();
        passes++;
      }
      expect(broken).toHaveLength(2);
    } finally {
      sluice.knex.off('query', count);
      await maintenance.stop();
    }
    expect(broken.map((b) => [b.queue, b.ready.count, b.breaches])).toEqual([
      ['p00050', 30, ['startWithin']],
      ['zz-late', 30, ['startWithin']],
    ]);
    for (const b of broken) expect(b.oldestReadyMs).toBeGreaterThanOrEqual(12_000);

    // The API and the recorded readings say so too: the second page of promises, the readings by key.
    expect((await sluice.queues.promises()).find((p) => p.queue === 'p00050')?.brokenAt).not.toBeNull();
    const [late] = await sluice.queues.promises({ after: 'p01100' });
    expect(late).toMatchObject({ queue: 'zz-late', startWithinMs: 2_000 });
    expect(late?.brokenAt).not.toBeNull();
    const readings = await sluice.queues.recordedDepth({ maxQueues: 5_000 });
    expect(readings.find((r) => r.queue === 'zz-late')?.ready).toEqual({ count: 30, exact: true });
    expect(readings.find((r) => r.queue === 'p00050')?.ready).toEqual({ count: 30, exact: true });
    process.stderr.write(`[operations] passes over 1,200 queues and 1,101 promises: ${statements} statements\n`);
  });
});
