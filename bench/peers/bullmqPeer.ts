/**
 * Peer: BullMQ on Redis (REDIS_URL, default redis://127.0.0.1:6379), through ioredis, the driver
 * BullMQ loads when given connection options. Queue `bench` under the key prefix `sluice-bench`.
 * Given a persistence mode, the peer switches the server to it before each use (redisPersistence.ts:
 * the grid measures BullMQ without persistence and with AOF fsynced every second, on one server);
 * without one it leaves the server as it is.
 * Run as a script, this file is the consumer child: BullMQ Workers built with autorun off, run on 'go'.
 */
import { createRequire } from 'node:module';
import { type Job, Queue, Worker, type WorkerOptions } from 'bullmq';
import { Redis } from 'ioredis';
import { type BenchJob, JOB_NAME, payloadLength } from '../workload.ts';
import { type Consumers, isMain, type OnProbe, runConsumerChild, startConsumers, wallNow } from './consumerChild.ts';
import { measurePickup } from './measurePickup.ts';
import { answers, type Peer, type PeerSetting, type Producer, timedDrain } from './peer.ts';
import {
  describePersistence,
  type RedisPersistence,
  restoreRedisPersistence,
  useRedisPersistence,
} from './redisPersistence.ts';

const QUEUE = 'bench';
const PREFIX = 'sluice-bench';
/** Jobs per addBulk call (each call is one MULTI), and the payload bytes one call may carry. */
const ADD_BULK_CHUNK = 10_000;
const ADD_BULK_BYTES = 8 * 1024 * 1024;
const SCRIPT = new URL(import.meta.url).pathname;
const VERSION = (createRequire(import.meta.url)('bullmq/package.json') as { version: string }).version;

function redisOptions() {
  const url = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  return {
    host: url.hostname,
    port: Number(url.port || 6379),
    db: Number(url.pathname.slice(1) || 0),
    ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
  };
}

/** Options of the consumer child beyond BullMQ's own: how many Worker instances share the concurrency. */
interface ChildOptions {
  readonly workers?: number;
}

/**
 * Defaults: one Worker (autorun, drainDelay 5 s, lockDuration 30 s, stalledInterval 30 s, completed
 * jobs kept) with only `concurrency` set. Best: on this 2-core machine Redis's one thread is the
 * bottleneck (~90% CPU while draining); in exploratory runs (3 interleaved rounds each) concurrency
 * 20 to 500, 2 and 4 Workers per process, removeOnComplete {count: 0} or {count: 1000}, and
 * skipLockRenewal + skipStalledCheck all did no better than one Worker at concurrency 50–100 with
 * the defaults, within ±30% noise. So 'best' is that Worker at concurrency 100, history kept.
 */
export const BULLMQ_SETTINGS: readonly PeerSetting[] = [
  { setting: 'defaults', concurrency: 50, describe: '1 Worker, concurrency 50, other options default', options: {} },
  { setting: 'defaults', concurrency: 500, describe: '1 Worker, concurrency 500, other options default', options: {} },
  {
    setting: 'defaults',
    concurrency: 1000,
    describe: '1 Worker, concurrency 1000, other options default',
    options: {},
  },
  {
    setting: 'best',
    concurrency: 100,
    describe:
      '1 Worker, concurrency 100, other options default (more Workers per process, removeOnComplete, skipLockRenewal/skipStalledCheck did not help: Redis-bound)',
    options: {},
  },
];

/** One row per cell of the grid: one Worker per process at the cell's concurrency, BullMQ's defaults otherwise. */
export function bullmqGridSetting(processes: number, concurrency: number): PeerSetting {
  return {
    setting: 'defaults',
    concurrency,
    processes,
    describe: `${processes} process(es) × 1 Worker, concurrency ${concurrency}, other options default`,
    options: {},
  };
}

export function bullmqPeer(settings: readonly PeerSetting[] = BULLMQ_SETTINGS, persistence?: RedisPersistence): Peer {
  const connection = redisOptions();
  let queue: Queue | undefined;
  let redis: Redis | undefined;
  const open = () => {
    if (!queue || !redis) throw new Error('bullmq peer: setup() first');
    return { queue, redis };
  };
  const persist = async () => {
    if (persistence) await useRedisPersistence(connection, persistence);
  };
  const waitingOrActive = async () => {
    const { queue: q, redis: r } = open();
    const replies = await r
      .pipeline()
      .llen(q.toKey('wait'))
      .llen(q.toKey('active'))
      .zcard(q.toKey('prioritized'))
      .exec();
    return (replies ?? []).reduce((sum, [error, n]) => {
      if (error) throw error;
      return sum + Number(n);
    }, 0);
  };
  return {
    name: `BullMQ ${VERSION}${persistence === 'aof-everysec' ? ' AOF' : ''}`,
    server: `Redis at ${connection.host}:${connection.port}`,
    keeps: 'completed jobs (no removeOnComplete)',
    settings,
    available: () => answers(connection.host, connection.port, Buffer.from('PING\r\n'), (r) => r.includes('PONG')),
    async setup() {
      redis = new Redis({ ...connection, maxRetriesPerRequest: 1 });
      queue = new Queue(QUEUE, { connection, prefix: PREFIX });
      await queue.waitUntilReady();
      await persist();
      await this.clear();
      const info = await redis.info('server');
      const pairs = (await redis.config('GET', 'appendonly', 'save')) as string[];
      const config = new Map(
        pairs.flatMap((v, i) => (i % 2 === 0 ? [[v, pairs[i + 1] ?? '']] : [])) as [string, string][],
      );
      return `Redis ${/redis_version:(\S+)/.exec(info)?.[1]}, persistence: appendonly ${config.get('appendonly')}, save "${config.get('save')}"`;
    },
    async durability() {
      if (persistence) return describePersistence(persistence);
      const pairs = (await open().redis.config('GET', 'appendonly', 'appendfsync')) as string[];
      return pairs.includes('yes')
        ? `AOF (appendfsync ${pairs[pairs.indexOf('appendfsync') + 1]})`
        : 'none (appendonly no)';
    },
    async clear() {
      await persist();
      await open().queue.obliterate({ force: true });
    },
    async enqueue(jobs: readonly BenchJob[]) {
      const { queue: q } = open();
      await persist();
      const started = performance.now();
      let chunk: BenchJob[] = [];
      let bytes = 0;
      for (const job of jobs) {
        chunk.push(job);
        bytes += payloadLength(job) + 64;
        if (chunk.length < ADD_BULK_CHUNK && bytes < ADD_BULK_BYTES) continue;
        await q.addBulk(chunk.map((j) => ({ name: j.name, data: j.payload })));
        chunk = [];
        bytes = 0;
      }
      if (chunk.length > 0) await q.addBulk(chunk.map((j) => ({ name: j.name, data: j.payload })));
      return (performance.now() - started) / 1000;
    },
    async drain(setting, limitMs, hooks) {
      await persist();
      const probes = { anyLeft: async () => (await waitingOrActive()) > 0, countLeft: waitingOrActive, ...hooks };
      return timedDrain(`BullMQ ${setting.setting} c${setting.concurrency}`, SCRIPT, setting, {}, probes, limitMs);
    },
    async consume(setting) {
      await persist();
      return startConsumers(SCRIPT, setting, {});
    },
    async pickupLatency(setting, samples, delayed) {
      await persist();
      const { queue: q } = open();
      const enqueue = (probe: number, dueAt: number | null) =>
        q.add('probe', { probe }, dueAt === null ? {} : { delay: Math.max(0, dueAt - wallNow()) });
      return measurePickup(SCRIPT, setting, {}, enqueue, samples, delayed);
    },
    async teardown() {
      await queue?.close();
      redis?.disconnect();
      if (persistence) await restoreRedisPersistence();
    },
  };
}

/** One job per add() call (a single enqueuer child's producer); the server's persistence is the parent's to set. */
export async function bullmqProducer(): Promise<Producer> {
  const queue = new Queue(QUEUE, { connection: redisOptions(), prefix: PREFIX });
  await queue.waitUntilReady();
  return {
    async enqueueOne(payload) {
      await queue.add(JOB_NAME, payload);
    },
    close: () => queue.close(),
  };
}

/** The child: `workers` Worker instances (default 1) sharing the setting's concurrency. */
async function buildConsumers(setting: PeerSetting, onProbe: OnProbe): Promise<Consumers> {
  const { workers: count = 1, ...options } = setting.options as ChildOptions & Partial<WorkerOptions>;
  const handler = async (job: Job<{ probe?: number }>) => {
    if (job.data.probe !== undefined) onProbe(job.data.probe);
  };
  const workers = Array.from(
    { length: count },
    () =>
      new Worker(QUEUE, handler, {
        ...options,
        connection: { ...redisOptions(), maxRetriesPerRequest: null },
        prefix: PREFIX,
        autorun: false,
        concurrency: Math.ceil(setting.concurrency / count),
      }),
  );
  for (const w of workers) w.on('error', fail);
  await Promise.all(workers.map((w) => w.waitUntilReady()));
  return {
    start() {
      for (const w of workers) w.run().catch(fail);
    },
    async stop() {
      await Promise.all(workers.map((w) => w.close()));
    },
  };
}

/** A benchmark consumer fails on its first error: the parent sees the exit and fails the measurement. */
function fail(error: unknown): never {
  process.stderr.write(`bullmq consumer: ${error}\n`);
  process.exit(1);
}

if (isMain(import.meta.url)) await runConsumerChild(buildConsumers);
