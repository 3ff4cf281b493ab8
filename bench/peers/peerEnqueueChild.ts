/**
 * One single-job enqueuer of the grid's single-enqueue rows (singleEnqueue.ts): argv `SYSTEM
 * SECONDS [TABLE]` (sluice, bullmq, bullmqAof, pgBoss or raw; the raw loop's TABLE; MYSQL_URL for
 * the MySQL systems). Builds that system's producer (its peer file's, loaded alone), says 'ready',
 * and on 'go' enqueues one job per call, each awaited — the way an application enqueues per
 * request — for SECONDS (ENQUEUE_CALLERS callers at once, each so); then sends { jobs, cpuUs } (the process's CPU over the window), and closes
 * and exits when the parent says so (any message) or goes.
 */
import type { Producer } from './peer.ts';

const [system = '', seconds = '5', table = 'raw_jobs'] = process.argv.slice(2);

const PRODUCERS: Record<string, () => Promise<Producer>> = {
  sluice: async () => (await import('./sluicePeer.ts')).sluiceProducer(),
  bullmq: async () => (await import('./bullmqPeer.ts')).bullmqProducer(),
  bullmqAof: async () => (await import('./bullmqPeer.ts')).bullmqProducer(),
  pgBoss: async () => (await import('./pgBossPeer.ts')).pgBossProducer(),
  raw: async () => (await import('./rawPeer.ts')).rawProducer(table),
};

// BENCH_OTEL=1: an OpenTelemetry SDK registered first, as an application would (sluice's `send` spans and trace rows).
if (process.env.BENCH_OTEL === '1') await import('../otelSdk.ts');
/** ENQUEUE_CALLERS: callers at once in this process, each awaiting its own calls (requests in flight together). */
const callers = Math.max(1, Number(process.env.ENQUEUE_CALLERS ?? 1));
const make = PRODUCERS[system];
if (!make) throw new Error(`peerEnqueueChild: unknown system "${system}" (${Object.keys(PRODUCERS).join(', ')})`);
const producer = await make();
// ENQUEUE_WARM_CALLS (bench ratio --warm): calls made before 'ready', outside the window, to time the
// steady state; for at most ENQUEUE_WARM_SECONDS (a producer that conflicts with draining consumers
// can take a second a call).
const warmUntil = performance.now() + Number(process.env.ENQUEUE_WARM_SECONDS ?? 5) * 1000;
for (let n = 0; n < Number(process.env.ENQUEUE_WARM_CALLS ?? 0) && performance.now() < warmUntil; n++)
  await producer.enqueueOne({ n, email: `user${n}@example.com` });
process.once('message', async () => {
  const until = performance.now() + Number(seconds) * 1000;
  const cpu = process.cpuUsage();
  let jobs = 0;
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (performance.now() < until) {
        const n = jobs++;
        await producer.enqueueOne({ n, email: `user${n}@example.com` });
      }
    }),
  );
  const { user, system: kernel } = process.cpuUsage(cpu);
  process.send?.({ jobs, cpuUs: user + kernel });
  // Connections stay open until the parent has read the server's CPU: a PostgreSQL backend that
  // exits takes its CPU with it.
  const close = () => void producer.close().then(() => process.exit(0));
  process.once('message', close);
  process.once('disconnect', close);
});
process.send?.('ready');
