import { existsSync } from 'node:fs';
import { SluiceMetrics } from '../metrics/metricsServer.ts';
import { createSluice } from '../Sluice.ts';
import { stopOnSignals } from '../shutdown.ts';
import { COMMON_HELP, intFlag, parse, help } from './parse.ts';

export const SWEEP_HELP = `sluice sweep: the maintenance process (leader-elected sweeper) until SIGINT/SIGTERM

  --once               one pass, print its result as JSON, exit
  --schedule CRON      node-cron expression, seconds allowed (default: */5 * * * * *)
  --lock-timeout-ms N  release claims older than this (default: 30000)
  --lease-ms N         leader lease length (default: 30000)
  --batch-size N       rows per sweep statement (default: 500)
  --jitter-ms N        random delay before each tick (default: 1000)
  --missed-heartbeats F  a worker that missed this many of its heartbeat intervals is dead (default: 2.5)
  --metrics-port N     also serve Prometheus metrics on GET /metrics
  --jobs DIR           job files whose \`schedule\` this process enqueues (default: jobs, if that folder exists)
${COMMON_HELP}`;

export async function sweepCommand(argv: string[]): Promise<number> {
  const { values: v } = parse(argv, {
    once: { type: 'boolean' },
    schedule: { type: 'string' },
    'lock-timeout-ms': { type: 'string' },
    'lease-ms': { type: 'string' },
    'batch-size': { type: 'string' },
    'jitter-ms': { type: 'string' },
    jobs: { type: 'string' },
    'metrics-port': { type: 'string' },
    'missed-heartbeats': { type: 'string' },
  });
  if (v.help) return help(SWEEP_HELP);
  const sluice = createSluice({ url: v.url, tablePrefix: v.prefix, poolMax: 4 });
  const maintainer = sluice.maintenance({
    schedule: v.schedule,
    lockTimeoutMs: intFlag('lock-timeout-ms', v['lock-timeout-ms']),
    leaseMs: intFlag('lease-ms', v['lease-ms']),
    batchSize: intFlag('batch-size', v['batch-size']),
    jitterMs: intFlag('jitter-ms', v['jitter-ms']),
    jobs: v.jobs ?? (existsSync('jobs') ? 'jobs' : undefined),
    missedHeartbeats: v['missed-heartbeats'] === undefined ? undefined : Number(v['missed-heartbeats']),
  });
  try {
    if (v.once) {
      const result = await maintainer.runOnce();
      await maintainer.stop();
      process.stdout.write(`${JSON.stringify(result)}\n`);
      return 0;
    }
    const metricsPort = intFlag('metrics-port', v['metrics-port']);
    const metrics = metricsPort === undefined ? null : await new SluiceMetrics(sluice).listen(metricsPort);
    const stopped = stopOnSignals(
      { stop: async () => Promise.all([maintainer.stop(), new Promise<void>((resolve) => (metrics ? metrics.close(() => resolve()) : resolve()))]).then(() => undefined) },
      sluice.logger,
    );
    await maintainer.start();
    process.send?.('ready');
    await stopped;
    return 0;
  } finally {
    await sluice.close();
  }
}
