/**
 * The single-enqueue ceiling beside bench/enqueueChild.ts: argv `PREFIX SECONDS`, the URL as
 * MYSQL_URL. One plain mysql2 connection; says 'ready', and on 'go' sends one autocommit INSERT of
 * the same row sluice writes (queue, name, payload, priority, run_at from NOW(3)) at a time, each
 * awaited, for SECONDS, then sends { jobs, cpuUs } (its own CPU over the loop, close included) and exits. No validation, no wake-up.
 */
import { connectRaw } from './rawConnection.ts';
import { BENCH_QUEUE, JOB_NAME } from './workload.ts';

const [prefix = '', seconds = '10'] = process.argv.slice(2);
const conn = await connectRaw(process.env.MYSQL_URL ?? '');

/** Params: ?1 queue, ?2 name, ?3 payload JSON. Returns the new job's insertId. */
const sqlInsert = `
INSERT INTO \`${prefix}jobs\` (queue, name, payload, priority, run_at)
VALUES (?, ?, ?, 0, NOW(3))`;

process.once('message', async () => {
  const until = performance.now() + Number(seconds) * 1000;
  const cpu = process.cpuUsage();
  let jobs = 0;
  while (performance.now() < until) {
    await conn.query(sqlInsert, [BENCH_QUEUE, JOB_NAME, JSON.stringify({ n: jobs, email: `user${jobs}@example.com` })]);
    jobs++;
  }
  await conn.end();
  const { user, system } = process.cpuUsage(cpu);
  process.send?.({ jobs, cpuUs: user + system }, () => process.exit(0));
});
process.send?.('ready');
