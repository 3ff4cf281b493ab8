/**
 * Peer: pg-boss on PostgreSQL (PG_URL, default postgres://postgres@127.0.0.1:5432/test), in its
 * own schema `sluice_bench_pgboss`, queue `bench` (standard policy). pg-boss 10 is the newest
 * release that supports Node 20 (11 and later need Node 22). Since 10, pg-boss has no concurrency
 * option: each work() call adds one polling worker (fetch up to batchSize jobs, run the handler on
 * the batch, then wait out pollingIntervalSeconds, default 2 s, less the time the batch took).
 * Run as a script, this file is the consumer child: pg-boss started, its work() calls made on 'go'.
 */
import { createRequire } from 'node:module';
import PgBoss from 'pg-boss';
import type { BenchJob } from '../workload.ts';
import { type Consumers, isMain, type OnProbe, runConsumerChild, startConsumers } from './consumerChild.ts';
import { answers, measurePickup, type Peer, type PeerSetting, type Producer, timedDrain } from './peer.ts';

const QUEUE = 'bench';
const SCHEMA = 'sluice_bench_pgboss';
const SCRIPT = new URL(import.meta.url).pathname;
const VERSION = (createRequire(import.meta.url)('pg-boss/package.json') as { version: string }).version;
/** Payload bytes one insert() call may carry (all 100,000 small jobs fit in one). */
const INSERT_BYTES = 32 * 1024 * 1024;
/** An SSLRequest packet: any PostgreSQL server answers it with one byte, 'S' or 'N'. */
const SSL_REQUEST = Uint8Array.from([0, 0, 0, 8, 4, 210, 22, 47]);

const connectionString = () => process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** The consumer child's options: `workers` work() calls, each with `work` options; `boss` for the constructor. */
interface ChildOptions {
  readonly workers: number;
  readonly work?: PgBoss.WorkOptions;
  readonly boss?: Partial<PgBoss.ConstructorOptions>;
  /** After a full batch, the handler calls notifyWorker(own id) so the worker fetches again at once. */
  readonly notifyWhenFull?: boolean;
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
 * Defaults: concurrency N = N work() calls (the maintainer's advice since 10 removed teamSize),
 * each at batchSize 1, pollingIntervalSeconds 2: a worker takes one job per 2 s at best, and each
 * fetch sorts every waiting job (ORDER BY priority, created_on under FOR UPDATE SKIP LOCKED:
 * ~140 ms with 100,000 waiting), so these rows are timed over a 10 s window. At 500 the pool
 * (max 10 connections) always holds ~490 queued fetches, and each job's complete() queues behind
 * them: jobs go active at ~12/s but none completes within 30 s, so that row drains 0 jobs/s.
 * Best at concurrency ≤ 500 (sluice's largest), from exploratory runs: fewer, larger fetches win,
 * as each costs a sort of the whole backlog. One work() with batchSize 500 beat 2 × 250, 4 × 500
 * and 50 × 1; pollingIntervalSeconds 0.5 is the minimum; priority: false (fetch by created_on
 * only) gained ~40%; the handler calling notifyWorker(its id) after a full batch skips the poll
 * wait, ~3× the rate without it. (Past 500, batchSize 5,000 drained at ~30,000 jobs/s: 20 fetches
 * for 100,000 jobs.)
 */
export const PG_BOSS_SETTINGS: readonly PeerSetting[] = [
  setting('defaults', 50, '50 work() calls, each batchSize 1, pollingIntervalSeconds 2', { workers: 50 }, 10),
  setting('defaults', 500, '500 work() calls, each batchSize 1, pollingIntervalSeconds 2', { workers: 500 }, 10),
  setting(
    'best',
    500,
    '1 work() call, batchSize 500, pollingIntervalSeconds 0.5, priority false, handler calls notifyWorker(id) after a full batch',
    { workers: 1, work: { batchSize: 500, pollingIntervalSeconds: 0.5, priority: false }, notifyWhenFull: true },
  ),
];

/**
 * One row per cell of the grid, at pg-boss's best for that concurrency (the 'best' row above, sized
 * to the cell): per process one work() call whose batch is the cell's concurrency (a batch handler
 * holds that many jobs in flight), pollingIntervalSeconds 0.5 (the minimum), priority false, and
 * notifyWorker after a full batch.
 */
export function pgBossGridSetting(processes: number, concurrency: number): PeerSetting {
  const row = setting(
    'best',
    concurrency,
    `${processes} process(es) × 1 work() call, batchSize ${concurrency}, pollingIntervalSeconds 0.5, priority false, notifyWorker(id) after a full batch`,
    {
      workers: 1,
      work: { batchSize: concurrency, pollingIntervalSeconds: 0.5, priority: false },
      notifyWhenFull: true,
    },
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
  /** Index seek on job_i5 (name, start_after) WHERE state < 'active'. */
  const anyWaiting = async () =>
    (await sql(`SELECT 1 FROM ${SCHEMA}.job WHERE name = $1 AND state < 'active' LIMIT 1`, [QUEUE])).length > 0;
  /** No index has state = 'active': a scan of the queue's partition, so asked only once none waits. */
  const anyActive = async () =>
    (await sql(`SELECT 1 FROM ${SCHEMA}.job WHERE name = $1 AND state = 'active' LIMIT 1`, [QUEUE])).length > 0;
  /** One insert() call: one statement, its rows as one JSON parameter. */
  const insert = async (jobs: readonly BenchJob[]) => {
    if (!boss) throw new Error('pg-boss peer: setup() first');
    await boss.insert(jobs.map((j) => ({ name: QUEUE, data: j.payload })));
  };
  const countLeft = async () =>
    Number(
      (await sql(`SELECT count(*) AS n FROM ${SCHEMA}.job WHERE name = $1 AND state < 'completed'`, [QUEUE]))[0]?.n,
    );
  return {
    name: `pg-boss ${VERSION}`,
    server: `PostgreSQL at ${url.hostname}:${url.port || 5432}`,
    keeps: 'completed jobs (archived after 12 h)',
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
      await sql(`TRUNCATE ${SCHEMA}.job, ${SCHEMA}.archive`);
    },
    async enqueue(jobs: readonly BenchJob[]) {
      const started = performance.now();
      let chunk: BenchJob[] = [];
      let bytes = 0;
      for (const job of jobs) {
        chunk.push(job);
        bytes += (job.payload.pad?.length ?? 0) + 64;
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

/** The child: pg-boss started with the setting's constructor options; `workers` work() calls on 'go'. */
async function buildConsumers(s: PeerSetting, onProbe: OnProbe): Promise<Consumers> {
  const { workers, work = {}, boss: bossOptions = {}, notifyWhenFull = false } = s.options as unknown as ChildOptions;
  const boss = new PgBoss({ ...bossOptions, connectionString: connectionString(), schema: SCHEMA });
  boss.on('error', fail);
  await boss.start();
  const batchSize = work.batchSize ?? 1;
  const addWorker = async () => {
    let id: string | undefined;
    id = await boss.work<{ probe?: number }>(QUEUE, work, async (jobs) => {
      for (const job of jobs) if (job.data.probe !== undefined) onProbe(job.data.probe);
      if (notifyWhenFull && id && jobs.length === batchSize) boss.notifyWorker(id);
    });
  };
  return {
    async start() {
      for (let i = 0; i < workers; i++) await addWorker();
    },
    async stop() {
      await boss.stop({ graceful: true, wait: true });
    },
  };
}

/** A benchmark consumer fails on its first error: the parent sees the exit and fails the measurement. */
function fail(error: unknown): never {
  process.stderr.write(`pg-boss consumer: ${error}\n`);
  process.exit(1);
}

if (isMain(import.meta.url)) await runConsumerChild(buildConsumers);
