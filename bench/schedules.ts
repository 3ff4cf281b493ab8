/**
 * bench schedules — what run-time schedules cost the maintenance pass (docs/schedules.md "Cost").
 * 100,000 schedules are stored; each round times (a) a pass with 10 of them due, and (b) a pass
 * firing 10,000 due in the same second (one job each). Three rounds, medians. Ratios within
 * one run only: the host is shared.
 *
 *   BENCH_DATABASE=sluice_bench_schedules npm run bench -- schedules
 */
import { openBench, truncate } from './benchDatabase.ts';
import { median } from './median.ts';

const STORED = 100_000;
const ROUNDS = 3;
const bench = await openBench(process.env.BENCH_DATABASE ?? 'sluice_bench_schedules');
const { conn, prefix, sluice } = bench;
const schedules = `${prefix}schedules`;
const digits = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map((d) => `SELECT ${d} AS d`).join(' UNION ALL ');

/** Every schedule due in a day but the first `due`, which are due now, on one second. */
async function seed(due: number): Promise<void> {
  await truncate(conn, [schedules, `${prefix}schedule_runs`, `${prefix}jobs`, `${prefix}idempotency_keys`]);
  await conn.query(
    `INSERT INTO \`${schedules}\` (schedule_key, job_name, queue, every_ms, payload, next_run_at, created_at)
     SELECT CONCAT('s', LPAD(n, 6, '0')), 'bench-tick', 'bench', 86400000, '{}',
            IF(n < ?, DATE_SUB(DATE_FORMAT(NOW(3), '%Y-%m-%d %H:%i:%s'), INTERVAL 1 SECOND), NOW(3) + INTERVAL 1 DAY), NOW(3)
     FROM (SELECT a.d + 10 * b.d + 100 * c.d + 1000 * e.d + 10000 * f.d AS n
           FROM (${digits}) a, (${digits}) b, (${digits}) c, (${digits}) e, (${digits}) f) seq`,
    [due],
  );
}

async function timedPass(): Promise<{ ms: number; fired: number }> {
  const maintenance = sluice.maintenance({ schedule: '0 0 1 1 *', jitterMs: 0 });
  try {
    const started = performance.now();
    const pass = await maintenance.runOnce();
    return { ms: performance.now() - started, fired: pass.tasks.fireSchedules?.fired ?? 0 };
  } finally {
    await maintenance.stop();
  }
}

const few: number[] = [];
const many: number[] = [];
for (let round = 1; round <= ROUNDS; round++) {
  await seed(10);
  const a = await timedPass();
  few.push(a.ms);
  await seed(10_000);
  const b = await timedPass();
  many.push(b.ms);
  process.stderr.write(
    `round ${round}: 10 due ${a.ms.toFixed(0)} ms (${a.fired} fired); 10,000 due ${b.ms.toFixed(0)} ms (${b.fired} fired)\n`,
  );
}
console.log(
  JSON.stringify({
    stored: STORED,
    passWith10DueMs: Math.round(median(few)),
    passFiring10000Ms: Math.round(median(many)),
    rounds: ROUNDS,
  }),
);
await bench.close();
