import { SLUICE_DEFAULTS } from '../options.ts';
import { stopOnSignals } from '../shutdown.ts';
import { type ClaimStrategy, MIN_HEARTBEAT_INTERVAL_MS, WORKER_DEFAULTS } from '../worker/workerOptions.ts';
import { JOBS_FLAG_HELP, jobsFolder, requireJobsFolder } from './jobsFolder.ts';
import { openSluice } from './openSluice.ts';
import { COMMON_HELP, fractionFlag, help, intFlag, listFlag, parse } from './parse.ts';

const D = WORKER_DEFAULTS;

export const WORK_HELP = `sluice work: run a worker until SIGINT/SIGTERM (a second signal forces)

  ${JOBS_FLAG_HELP}
  --queues a,b             queues to claim from: names, or patterns ('tenant-*', '*': every queue)
                           (default: ${D.queues.join(',')})
  --concurrency N          jobs at once (default: ${D.concurrency})
  --claim S                random-head | skip-locked (default: ${D.claim})
  --lock-timeout-ms N      claim lifetime without heartbeat (default: ${D.lockTimeoutMs})
  --heartbeat-interval-ms N  at least ${MIN_HEARTBEAT_INTERVAL_MS} (default: the smaller of ${D.heartbeatIntervalMs} and lock timeout / 3)
  --poll-interval-ms N     empty-queue poll delay (default: ${D.pollIntervalMs})
  --max-poll-interval-ms N longest idle poll delay (default: ${D.maxPollIntervalMs})
  --shutdown-timeout-ms N  drain deadline on stop (default: ${D.shutdownTimeoutMs})
  --job-timeout-ms N       an attempt's timeout when its definition sets none (default: ${D.jobTimeoutMs})
  --claim-batch-size N     most jobs per claim (default: ${D.claimBatchSize})
  --head-size N            head candidates per claim (default: ${D.headSize})
  --max-cpu F              halve concurrency while host CPU is above F (0–1; default: ${D.loadPolicy.maxCpu} = never)
  --min-free-mem F         halve concurrency while free memory is below F (0–1; default: ${D.loadPolicy.minFreeMem})
  --history-retention-ms N keep completed jobs in job_history this long; 0 keeps none. Prefer the
                           install's setting (sluice settings set), which every process follows: a
                           value here that differs from it is refused (default: the install's, else
                           ${SLUICE_DEFAULTS.historyRetentionMs})
  --no-doorbell            no wake-up connection: jobs enqueued by other processes wait for a poll
                           (default: a doorbell, one more connection per worker)
  --metrics-interval-ms N  how often the heartbeat carries this worker's counters and histograms to
                           \`sluice metrics\`; 0: every beat (default: ${D.metricsIntervalMs})
  --metrics-max-names N    job names counted apart in the metrics; the rest as "(other)" (default: ${D.metricsMaxNames})
  --fair-settle-interval-ms N  how often finished jobs of fair groups are counted off their groups'
                           windows, each refilled from 3/4 (default: ${D.fairSettleIntervalMs})
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
    'job-timeout-ms': { type: 'string' },
    'no-doorbell': { type: 'boolean' },
    'metrics-interval-ms': { type: 'string' },
    'metrics-max-names': { type: 'string' },
    'fair-settle-interval-ms': { type: 'string' },
  });
  if (v.help) return help(WORK_HELP);
  const concurrency = intFlag('concurrency', v.concurrency, 1) ?? D.concurrency;
  const workerOptions = {
    queues: listFlag(v.queues),
    concurrency,
    jobs: requireJobsFolder(jobsFolder(v.jobs)),
    claim: v.claim as ClaimStrategy | undefined,
    lockTimeoutMs: intFlag('lock-timeout-ms', v['lock-timeout-ms']),
    heartbeatIntervalMs: intFlag('heartbeat-interval-ms', v['heartbeat-interval-ms']),
    pollIntervalMs: intFlag('poll-interval-ms', v['poll-interval-ms']),
    shutdownTimeoutMs: intFlag('shutdown-timeout-ms', v['shutdown-timeout-ms']),
    jobTimeoutMs: intFlag('job-timeout-ms', v['job-timeout-ms']),
    claimBatchSize: intFlag('claim-batch-size', v['claim-batch-size']),
    headSize: intFlag('head-size', v['head-size']),
    maxPollIntervalMs: intFlag('max-poll-interval-ms', v['max-poll-interval-ms']),
    metricsIntervalMs: intFlag('metrics-interval-ms', v['metrics-interval-ms']),
    metricsMaxNames: intFlag('metrics-max-names', v['metrics-max-names'], 1),
    fairSettleIntervalMs: intFlag('fair-settle-interval-ms', v['fair-settle-interval-ms'], 1),
    ...(v['no-doorbell'] ? { doorbell: false } : {}),
    loadPolicy: {
      maxCpu: fractionFlag('max-cpu', v['max-cpu']),
      minFreeMem: fractionFlag('min-free-mem', v['min-free-mem']),
    },
  };
  const historyRetentionMs = intFlag('history-retention-ms', v['history-retention-ms']);
  // A ceiling, not a reservation: connections open as handlers use them (exactly-once jobs hold one
  // each while they run) and close once idle. Claims, completions and heartbeats have a pool of their own.
  const sluice = await openSluice(v, { poolMax: concurrency + 2, historyRetentionMs });
  try {
    const worker = sluice.worker(workerOptions);
    const stopped = stopOnSignals(worker, sluice.logger);
    await worker.start();
    process.send?.('ready');
    await stopped;
    return 0;
  } finally {
    await sluice.close();
  }
}
