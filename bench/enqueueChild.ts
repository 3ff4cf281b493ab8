/**
 * One single-job enqueuer of bench/concurrentEnqueue.ts: argv `ROOT PREFIX SECONDS`, the URL as MYSQL_URL. Opens the
 * sluice of checkout ROOT, says 'ready', and on 'go' enqueues one job at a time (each awaited, the
 * way an application handling requests does) for SECONDS, then sends { jobs, cpuUs } (its own CPU over the loop, close included) and exits.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { pino } from 'pino';
import { BENCH_QUEUE, JOB_NAME } from './workload.ts';

const [root = '.', prefix = '', seconds = '10'] = process.argv.slice(2);
const url = process.env.MYSQL_URL ?? '';
const mod = (await import(pathToFileURL(join(root, 'src/index.ts')).href)) as typeof import('sluice');
const sluice = mod.createSluice({ url, tablePrefix: prefix, logger: pino({ level: 'warn' }, pino.destination(2)) });
await sluice.knex.raw('SELECT 1');
process.once('message', async () => {
  const until = performance.now() + Number(seconds) * 1000;
  const cpu = process.cpuUsage();
  let jobs = 0;
  while (performance.now() < until) {
    await sluice.enqueue({
      name: JOB_NAME,
      queue: BENCH_QUEUE,
      payload: { n: jobs, email: `user${jobs}@example.com` },
    });
    jobs++;
  }
  await sluice.close();
  const { user, system } = process.cpuUsage(cpu);
  process.send?.({ jobs, cpuUs: user + system }, () => process.exit(0));
});
process.send?.('ready');
