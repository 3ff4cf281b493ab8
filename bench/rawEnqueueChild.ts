/**
 * One single-job enqueuer of the raw side (singleEnqueue.ts): argv `TABLE SECONDS`, the URL as
 * MYSQL_URL. Plain mysql2, no sluice code: says 'ready', and on 'go' writes one job per autocommit
 * INSERT, each awaited, for SECONDS — the floor of a single enqueue on this server (one round trip,
 * one durable commit). An INSERT that a draining claim loop's locks turn into a deadlock (1213) is
 * sent again, as an application would. Then sends { jobs } and exits.
 */
import { connectRaw } from './rawConnection.ts';
import { BENCH_QUEUE, JOB_NAME } from './workload.ts';

/** Params: ?1 queue, ?2 name, ?3 payload JSON. One row, committed on its own (autocommit). */
const sqlInsertOne = (table: string) => `
INSERT INTO \`${table}\` (queue, name, payload, priority, run_at, created_at)
VALUES (?, ?, ?, 0, NOW(3), NOW(3))`;

const [table = 'raw_jobs', seconds = '10'] = process.argv.slice(2);
const url = process.env.MYSQL_URL;
if (!url) throw new Error('rawEnqueueChild: set MYSQL_URL');
const conn = await connectRaw(url);
process.once('message', async () => {
  const sql = sqlInsertOne(table);
  const until = performance.now() + Number(seconds) * 1000;
  let jobs = 0;
  while (performance.now() < until) {
    const row = [BENCH_QUEUE, JOB_NAME, JSON.stringify({ n: jobs, email: `user${jobs}@example.com` })];
    try {
      await conn.query(sql, row);
      jobs++;
    } catch (error) {
      if ((error as { errno?: number }).errno !== 1213) throw error;
    }
  }
  await conn.end();
  process.send?.({ jobs }, () => process.exit(0));
});
process.send?.('ready');
