import { createSluice } from '../Sluice.ts';
import type { ClaimStrategy } from '../options.ts';
import { stopOnSignals } from '../shutdown.ts';
import { COMMON_HELP, fractionFlag, intFlag, parse, help } from './parse.ts';

export const WORK_HELP = `sluice work: run a worker until SIGINT/SIGTERM (a second signal forces)

  --queues a,b             queues to claim from (default: default)
  --concurrency N          jobs at once (default: 10)
  --jobs DIR               folder of job files (default: jobs)
  --claim S                random-head | skip-locked (default: random-head)
  --lock-timeout-ms N      claim lifetime without heartbeat (default: 30000)
  --heartbeat-interval-ms N  (default: the smaller of 2000 and lock timeout / 3)
  --poll-interval-ms N     empty-queue poll delay (default: 1000)
  --shutdown-timeout-ms N  drain deadline on stop (default: 10000)
  --claim-batch-size N     most jobs per claim (default: 50)
  --head-size N            head candidates per claim (default: 200)
  --max-cpu F              halve concurrency while host CPU is above F (0–1; default: 1 = never)
  --min-free-mem F         halve concurrency while free memory is below F (0–1; default: 0.05)
  --max-poll-interval-ms N longest idle poll delay (default: 5000)
  --history-retention-ms N keep completed jobs in job_history this long; 0 keeps none (default: 86400000)
${COMMON_HELP}`;

export async function workCommand(argv: string[]): Promise<number> {
  const { values: v } = parse(argv, {
    queues: { type: 'string' },
    concurrency: { type: 'string' },
    jobs: { type: 'string' },
    claim: { type: 'string' },
    'lock-timeout-ms': { type: 'string' },
    'heartbeat-interval-ms': { type: 'string' },
    'poll-interval-ms': { type: 'string' },
    'shutdown-timeout-ms': { type: 'string' },
    'claim-batch-size': { type: 'string' },
    'head-size': { type: 'string' },
    'max-cpu': { type: 'string' },
    'min-free-mem': { type: 'string' },
    'max-poll-interval-ms': { type: 'string' },
    'history-retention-ms': { type: 'string' },
  });
  if (v.help) return help(WORK_HELP);
  const concurrency = intFlag('concurrency', v.concurrency) ?? 10;
  const sluice = createSluice({
    url: v.url,
    tablePrefix: v.prefix,
    poolMax: Math.min(100, concurrency + 4),
    historyRetentionMs: intFlag('history-retention-ms', v['history-retention-ms']),
  });
  const worker = sluice.worker({
    queues: v.queues?.split(',').map((q) => q.trim()).filter(Boolean),
    concurrency,
    jobs: v.jobs,
    claim: v.claim as ClaimStrategy | undefined,
    lockTimeoutMs: intFlag('lock-timeout-ms', v['lock-timeout-ms']),
    heartbeatIntervalMs: intFlag('heartbeat-interval-ms', v['heartbeat-interval-ms']),
    pollIntervalMs: intFlag('poll-interval-ms', v['poll-interval-ms']),
    shutdownTimeoutMs: intFlag('shutdown-timeout-ms', v['shutdown-timeout-ms']),
    claimBatchSize: intFlag('claim-batch-size', v['claim-batch-size']),
    headSize: intFlag('head-size', v['head-size']),
    maxPollIntervalMs: intFlag('max-poll-interval-ms', v['max-poll-interval-ms']),
    loadPolicy: { maxCpu: fractionFlag('max-cpu', v['max-cpu']), minFreeMem: fractionFlag('min-free-mem', v['min-free-mem']) },
  });
  try {
    const stopped = stopOnSignals(worker, sluice.logger);
    await worker.start();
    process.send?.('ready');
    await stopped;
    return 0;
  } finally {
    await sluice.close();
  }
}
