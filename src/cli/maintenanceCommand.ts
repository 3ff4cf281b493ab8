import { MAINTENANCE_DEFAULTS } from '../maintenance/maintenanceOptions.ts';
import { stopOnSignals } from '../shutdown.ts';
import { jobsFolder, requireJobsFolder } from './jobsFolder.ts';
import { openSluice } from './openSluice.ts';
import { COMMON_HELP, help, intFlag, parse, portFlag, positiveFlag } from './parse.ts';
import { terminalJson } from './terminalText.ts';

const D = MAINTENANCE_DEFAULTS;

export const MAINTENANCE_HELP = `sluice maintenance: the maintenance process (leader-elected: recovers claims of dead workers,
finishes batches, prunes, enqueues recurring jobs) until SIGINT/SIGTERM

  --once               one pass, print its result as JSON, exit
  --schedule CRON      node-cron expression, seconds allowed (default: ${D.schedule})
  --lock-timeout-ms N  release claims of unregistered workers older than this; a registered
                       worker's claims follow the lock timeout it registered (default: ${D.lockTimeoutMs})
  --lease-ms N         leader lease length (default: ${D.leaseMs})
  --batch-size N       rows per maintenance statement (default: ${D.batchSize})
  --jitter-ms N        random delay before each tick (default: ${D.jitterMs})
  --missed-heartbeats F  a worker that missed this many of its heartbeat intervals is dead (default: ${D.missedHeartbeats})
  --queue-check-interval-ms N  read every queue's depth (metrics, latency promises) at most this often
                       (default: ${D.queueCheckIntervalMs}: every pass)
  --metrics-port N     also serve Prometheus metrics on GET /metrics
  --metrics-host H     address the metrics bind (default: 127.0.0.1)
  --jobs DIR           job files whose \`schedule\` this process enqueues, resolved against the current
                       folder (default: SLUICE_JOBS, then ./jobs if that folder exists)
${COMMON_HELP}`;

export async function maintenanceCommand(argv: string[]): Promise<number> {
  const { values: v } = parse(argv, {
    once: { type: 'boolean' },
    schedule: { type: 'string' },
    'lock-timeout-ms': { type: 'string' },
    'lease-ms': { type: 'string' },
    'batch-size': { type: 'string' },
    'jitter-ms': { type: 'string' },
    jobs: { type: 'string' },
    'metrics-port': { type: 'string' },
    'metrics-host': { type: 'string' },
    'missed-heartbeats': { type: 'string' },
    'queue-check-interval-ms': { type: 'string' },
  });
  if (v.help) return help(MAINTENANCE_HELP);
  const folder = jobsFolder(v.jobs);
  const options = {
    schedule: v.schedule,
    lockTimeoutMs: intFlag('lock-timeout-ms', v['lock-timeout-ms']),
    leaseMs: intFlag('lease-ms', v['lease-ms']),
    batchSize: intFlag('batch-size', v['batch-size']),
    jitterMs: intFlag('jitter-ms', v['jitter-ms']),
    jobs: folder.explicit || folder.exists ? requireJobsFolder(folder) : undefined,
    missedHeartbeats: positiveFlag('missed-heartbeats', v['missed-heartbeats']),
    queueCheckIntervalMs: intFlag('queue-check-interval-ms', v['queue-check-interval-ms']),
  };
  const metricsPort = portFlag('metrics-port', v['metrics-port']);
  const sluice = await openSluice(v, { poolMax: 4 });
  try {
    const maintenance = sluice.maintenance(options);
    if (v.once) {
      const result = await maintenance.runOnce();
      await maintenance.stop();
      process.stdout.write(`${terminalJson(result)}\n`);
      return 0;
    }
    const metrics =
      metricsPort === undefined
        ? null
        : await new (await import('../metrics/SluiceMetrics.ts')).SluiceMetrics(sluice).listen(
            metricsPort,
            v['metrics-host'] ?? '127.0.0.1',
          );
    const stopped = stopOnSignals(
      {
        stop: async () =>
          Promise.all([
            maintenance.stop(),
            new Promise<void>((resolve) => (metrics ? metrics.close(() => resolve()) : resolve())),
          ]).then(() => undefined),
      },
      sluice.logger,
    );
    await maintenance.start();
    process.send?.('ready');
    await stopped;
    return 0;
  } finally {
    await sluice.close();
  }
}
