/**
 * Peer: pg-boss 12 on PostgreSQL (PG_URL, default postgres://postgres@127.0.0.1:5432/test), in its
 * own schema `sluice_bench_pgboss_v<major>` (a schema per major: pg-boss migrates a schema forward
 * on start, and a checkout still on an older major must keep its own), queue `bench` (standard
 * policy). pg-boss 12 declares Node 22 (`engines: >=22.12.0`); npm installs it on Node 20 with an
 * EBADENGINE warning only, and the bench runs it there. A work() call starts `localConcurrency`
 * polling workers (default 1); each fetches up to batchSize jobs, runs the handler on the batch,
 * then waits out pollingIntervalSeconds (default 2 s, at least 0.5) less the time the batch took,
 * or fetches again at once with burstWhenBatchFull while its fetches come back full.
 * Run as a script, this file is the consumer child: pg-boss started, its work() call made on 'go'.
 */
import { createRequire } from 'node:module';
import { type ConstructorOptions, PgBoss, type WorkOptions } from 'pg-boss';
import { type BenchJob, payloadLength } from '../workload.ts';
import { type Consumers, isMain, type OnProbe, runConsumerChild, startConsumers } from './consumerChild.ts';
import { measurePickup } from './measurePickup.ts';
import { answers, type Peer, type PeerSetting, type Producer, timedDrain } from './peer.ts';

const QUEUE = 'bench';
const SCRIPT = new URL(import.meta.url).pathname;
/** The installed pg-boss's version, read at run time from its package.json. */
const VERSION = (createRequire(import.meta.url)('pg-boss/package.json') as { version: string }).version;
const SCHEMA = `sluice_bench_pgboss_v${VERSION.split('.')[0]}`;
/** Payload bytes one insert() call may carry (all 100,000 small jobs fit in one). */
const INSERT_BYTES = 32 * 1024 * 1024;
/** An SSLRequest packet: any PostgreSQL server answers it with one byte, 'S' or 'N'. */
const SSL_REQUEST = Uint8Array.from([0, 0, 0, 8, 4, 210, 22, 47]);

const connectionString = () => process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** The consumer child's options: one work() call with `work` options; `boss` for the constructor. */
interface ChildOptions {
  readonly work?: WorkOptions;
  readonly boss?: Partial<ConstructorOptions>;
}

const setting = (
  s: PeerSetting['setting'],
  concurrency: number,
  describe: string,
  options: ChildOptions,
  limitSeconds?: number,
): PeerSetting => ({
  setting: s,
  concurrency,
  describe,
  options: { ...options },
  ...(limitSeconds ? { limitSeconds } : {}),
});

/**
 * Defaults: concurrency N = one work() call with localConcurrency N (12's option for N polling
 * workers; 10 had none, and the rows were N work() calls), each at batchSize 1,
 * pollingIntervalSeconds 2: a worker takes one job per 2 s at best, so these rows are timed over a
 * 10 s window. On 10 the 500 row drained nothing within 30 s (~490 fetches queued on the pool of
 * 10 connections, each completion behind them); on 12, in one small try (3,000 jobs, a loaded
 * host), the 50 row drained 25 jobs/s and the 500 row 250 jobs/s, the best row ~9,800 jobs/s.
 * Best at concurrency ≤ 500 (sluice's largest): one work() call (localConcurrency 1) whose batch is
 * the concurrency, pollingIntervalSeconds 0.5 (the minimum) and burstWhenBatchFull, which fetches
 * again at once while fetches come back full (12's own option for what the 10 peer did by calling
 * notifyWorker(id) after a full batch, ~3× the rate without it on 10). On 10 one work() with
 * batchSize 500 beat 2 × 250, 4 × 500 and 50 × 1, as each fetch orders the backlog; the
 * `priority: false` of the 10 peer (~40 % on 10) is gone: 12 ignores it since 12.30.0 and always
 * fetches by priority, then creation order, on an index in that order.
 */
export const PG_BOSS_SETTINGS: readonly PeerSetting[] = [
  setting(
    'defaults',
    50,
    '1 work() call, localConcurrency 50, batchSize 1, pollingIntervalSeconds 2',
    { work: { localConcurrency: 50 } },
    10,
  ),
  setting(
    'defaults',
    500,
    '1 work() call, localConcurrency 500, batchSize 1, pollingIntervalSeconds 2',
    { work: { localConcurrency: 500 } },
    10,
  ),
  setting(
    'best',
    500,
    '1 work() call, localConcurrency 1, batchSize 500, pollingIntervalSeconds 0.5, burstWhenBatchFull',
    { work: { batchSize: 500, pollingIntervalSeconds: 0.5, burstWhenBatchFull: true } },
  ),
];

/**
 * One row per cell of the grid, at pg-boss's best for that concurrency (the 'best' row above, sized
 * to the cell): per process one work() call, one worker, whose batch is the cell's concurrency (a
 * batch handler holds that many jobs in flight), pollingIntervalSeconds 0.5 (the minimum), and
 * burstWhenBatchFull.
 */
export function pgBossGridSetting(processes: number, concurrency: number): PeerSetting {
  const row = setting(
    'best',
    concurrency,
    `${processes} process(es) × 1 work() call, localConcurrency 1, batchSize ${concurrency}, pollingIntervalSeconds 0.5, burstWhenBatchFull`,
    { work: { batchSize: concurrency, pollingIntervalSeconds: 0.5, burstWhenBatchFull: true } },
  );
  return { ...row, processes };
}

export function pgBossPeer(settings: readonly PeerSetting[] = PG_BOSS_SETTINGS): Peer {
  const url = new URL(connectionString());
  let boss: PgBoss | undefined;
  const sql = async (text: string, values: unknown[] = []) => {
    if (!boss) throw new Error('pg-boss peer: setup() first');
    return (await boss.getDb().executeSql(text, values)).rows;
  };
  /** Index seeks on job_i14 (name, state, blocked, start_after) WHERE state is live. */
  const anyWaiting = async () =>
    (await sql(`SELECT 1 FROM ${SCHEMA}.job WHERE name = $1 AND state IN ('created', 'retry') LIMIT 1`, [QUEUE]))
      .length > 0;
  const anyActive = async () =>
    (await sql(`SELECT 1 FROM ${SCHEMA}.job WHERE name = $1 AND state = 'active' LIMIT 1`, [QUEUE])).length > 0;
  /** One insert(name, jobs) call: one statement, its rows as one JSON parameter. */
  const insert = async (jobs: readonly BenchJob[]) => {
    if (!boss) throw new Error('pg-boss peer: setup() first');
    await boss.insert(
      QUEUE,
      jobs.map((j) => ({ data: j.payload })),
    );
  };
  const countLeft = async () =>
    Number(
      (await sql(`SELECT count(*) AS n FROM ${SCHEMA}.job WHERE name = $1 AND state < 'completed'`, [QUEUE]))[0]?.n,
    );
  return {
    name: `pg-boss ${VERSION}`,
    server: `PostgreSQL at ${url.hostname}:${url.port || 5432}`,
    keeps: 'completed jobs (deleted after 7 days)',
    settings,
    available: () => answers(url.hostname, Number(url.port || 5432), SSL_REQUEST, (r) => r[0] === 83 || r[0] === 78),
    async setup() {
      // The producer and probe: no maintenance or cron here (the consumer child runs pg-boss's defaults).
      boss = new PgBoss({
        connectionString: connectionString(),
        schema: SCHEMA,
        max: 2,
        supervise: false,
        schedule: false,
      });
      boss.on('error', (error) => process.stderr.write(`pg-boss producer: ${error}\n`));
      await boss.start();
      await this.clear();
      if (await boss.getQueue(QUEUE)) await boss.deleteQueue(QUEUE);
      await boss.createQueue(QUEUE);
      const version = String((await sql('SHOW server_version'))[0]?.server_version);
      const commit = String((await sql('SHOW synchronous_commit'))[0]?.synchronous_commit);
      return `PostgreSQL ${version}, synchronous_commit ${commit}`;
    },
    async durability() {
      const commit = String((await sql('SHOW synchronous_commit'))[0]?.synchronous_commit);
      const fsync = String((await sql('SHOW fsync'))[0]?.fsync);
      return fsync === 'on' && commit !== 'off'
        ? `fsync per commit (synchronous_commit ${commit})`
        : `no fsync per commit (synchronous_commit ${commit}, fsync ${fsync})`;
    },
    async clear() {
      await sql(`TRUNCATE ${SCHEMA}.job`);
    },
    async enqueue(jobs: readonly BenchJob[]) {
      const started = performance.now();
      let chunk: BenchJob[] = [];
      let bytes = 0;
      for (const job of jobs) {
        chunk.push(job);
        bytes += payloadLength(job) + 64;
        if (bytes < INSERT_BYTES) continue;
        await insert(chunk);
        chunk = [];
        bytes = 0;
      }
      if (chunk.length > 0) await insert(chunk);
      return (performance.now() - started) / 1000;
    },
    drain(s, limitMs, hooks) {
      const probes = { anyLeft: async () => (await anyWaiting()) || (await anyActive()), countLeft, ...hooks };
      return timedDrain(`pg-boss ${s.setting} c${s.concurrency}`, SCRIPT, s, {}, probes, limitMs);
    },
    consume: (s) => startConsumers(SCRIPT, s, {}),
    pickupLatency(s, samples, delayed) {
      const enqueue = async (probe: number, dueAt: number | null) =>
        boss?.send(QUEUE, { probe }, dueAt === null ? {} : { startAfter: new Date(dueAt) });
      return measurePickup(SCRIPT, s, {}, enqueue, samples, delayed);
    },
    async teardown() {
      if (boss) await this.clear();
      await boss?.stop({ graceful: false });
    },
  };
}

/** One job per send() call (a single enqueuer child's producer): pg-boss without its maintenance. */
export async function pgBossProducer(): Promise<Producer> {
  const boss = new PgBoss({
    connectionString: connectionString(),
    schema: SCHEMA,
    max: 2,
    supervise: false,
    schedule: false,
  });
  boss.on('error', fail);
  await boss.start();
  return {
    async enqueueOne(payload) {
      await boss.send(QUEUE, payload);
    },
    close: () => boss.stop({ graceful: false }),
  };
}

/** The child: pg-boss started with the setting's constructor options; one work() call on 'go'. */
async function buildConsumers(s: PeerSetting, onProbe: OnProbe): Promise<Consumers> {
  const { work = {}, boss: bossOptions = {} } = s.options as unknown as ChildOptions;
  const boss = new PgBoss({ ...bossOptions, connectionString: connectionString(), schema: SCHEMA });
  boss.on('error', fail);
  await boss.start();
  return {
    async start() {
      await boss.work<{ probe?: number }>(QUEUE, work, async (jobs) => {
        for (const job of jobs) if (job.data.probe !== undefined) onProbe(job.data.probe);
      });
    },
    async stop() {
      await boss.stop({ graceful: true });
    },
  };
}

/** A benchmark consumer fails on its first error: the parent sees the exit and fails the measurement. */
function fail(error: unknown): never {
  process.stderr.write(`pg-boss consumer: ${error}\n`);
  process.exit(1);
}

if (isMain(import.meta.url)) await runConsumerChild(buildConsumers);
