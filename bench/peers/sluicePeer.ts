/**
 * sluice itself as a row of the peer table, measured by the same harness as BullMQ and pg-boss
 * (peer.ts): the same 100,000 jobs enqueued before the window, one consumer child process, the
 * clock started on 'go', the end found by an existence probe (an index seek, never a COUNT), and
 * the same pickup-latency probe from this (another) process into an idle worker. The database is
 * MYSQL_URL's server (or the local default), database `sluice_bench` (BENCH_DATABASE names another,
 * for runs side by side), table prefix `peer_` (bench/run.ts re-creates that database; run alone,
 * this creates it if missing).
 * Run as a script, this file is the consumer child: a sluice worker built on 'ready', started on 'go'
 * (it imports the sources directly: the harness starts children without --conditions=sluice-source).
 */
import { createRequire } from 'node:module';
import { createConnection, type RowDataPacket } from 'mysql2/promise';
import { pino } from 'pino';
import { createSluice, defineJob, type Sluice } from '../../src/index.ts';
import { BENCH_QUEUE, type BenchJob, JOB_NAME } from '../workload.ts';
import { type Consumers, isMain, type OnProbe, runConsumerChild, startConsumers } from './consumerChild.ts';
import { measurePickup } from './measurePickup.ts';
import { mysqlDurability } from './mysqlDurability.ts';
import { type Peer, type PeerSetting, type Producer, timedDrain } from './peer.ts';

const PREFIX = 'peer_';
const DATABASE = process.env.BENCH_DATABASE ?? 'sluice_bench';
const SCRIPT = new URL(import.meta.url).pathname;
const VERSION = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;

function peerUrl(): string {
  const url = new URL(process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test');
  url.pathname = `/${DATABASE}`;
  return url.toString();
}

/** Only the concurrency set: every other option at its default (history kept, claims fill the free slots). */
export const SLUICE_SETTINGS: readonly PeerSetting[] = [
  {
    setting: 'defaults',
    concurrency: 50,
    describe: 'sluice.worker({ concurrency: 50 }), other options default',
    options: {},
  },
  {
    setting: 'defaults',
    concurrency: 500,
    describe: 'sluice.worker({ concurrency: 500 }), other options default',
    options: {},
  },
  {
    setting: 'defaults',
    concurrency: 1000,
    describe: 'sluice.worker({ concurrency: 1000 }), other options default',
    options: {},
  },
];

const logger = () => pino({ level: 'warn' }, pino.destination(2));

/** One row per cell of the grid: the cell's concurrency in each process, every other option default. */
export function sluiceGridSetting(processes: number, concurrency: number): PeerSetting {
  return {
    setting: 'defaults',
    concurrency,
    processes,
    describe: `${processes} process(es) × sluice.worker({ concurrency: ${concurrency} }), other options default`,
    options: {},
  };
}

/**
 * Params: ?1 database, ?2 prefix (LIKE-escaped). Returns the install's tables but its migration
 * bookkeeping: all that clear() empties, whatever tables the schema has grown.
 */
const SQL_INSTALL_TABLES = `
SELECT TABLE_NAME AS name
FROM information_schema.TABLES
WHERE TABLE_SCHEMA = ?
  AND TABLE_NAME LIKE ?
  AND TABLE_TYPE = 'BASE TABLE'
  AND TABLE_NAME NOT LIKE '%migrations%'`;

export function sluicePeer(settings: readonly PeerSetting[] = SLUICE_SETTINGS): Peer {
  const url = peerUrl();
  let sluice: Sluice | undefined;
  const open = () => {
    if (!sluice) throw new Error('sluice peer: setup() first');
    return sluice;
  };
  const sql = async (text: string, values: unknown[] = []) =>
    ((await open().knex.raw(text, values as never[])) as [Record<string, unknown>[]])[0];
  /** One ix_head seek: is any job of the queue left (waiting or running)? */
  const anyLeft = async () =>
    (await sql(`SELECT 1 FROM ${PREFIX}jobs WHERE queue = ? LIMIT 1`, [BENCH_QUEUE])).length > 0;
  const countLeft = async () =>
    Number((await sql(`SELECT COUNT(*) AS n FROM ${PREFIX}jobs WHERE queue = ?`, [BENCH_QUEUE]))[0]?.n);
  const server = new URL(url);
  return {
    name: `sluice ${VERSION}`,
    server: `MySQL/MariaDB at ${server.hostname}:${server.port || 3306}`,
    keeps: 'completed jobs (job_history, 24 h)',
    settings,
    async available() {
      try {
        const conn = await createConnection({ uri: serverUrl(url), connectTimeout: 2_000 });
        await conn.query(`CREATE DATABASE IF NOT EXISTS \`${DATABASE}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
        await conn.end();
        return true;
      } catch {
        return false;
      }
    },
    async setup() {
      sluice = createSluice({ url, tablePrefix: PREFIX, logger: logger() });
      await sluice.migrate();
      await this.clear();
      const [row] = (await sql('SELECT VERSION() AS v, @@innodb_flush_log_at_trx_commit AS f')) as RowDataPacket[];
      return `${row?.v}, innodb_flush_log_at_trx_commit ${row?.f}`;
    },
    async durability() {
      const conn = await createConnection({ uri: url });
      try {
        return await mysqlDurability(conn);
      } finally {
        await conn.end();
      }
    },
    async clear() {
      // One connection of its own: foreign keys off for the TRUNCATEs, whatever references what.
      const conn = await createConnection({ uri: url });
      try {
        const [tables] = await conn.query<RowDataPacket[]>(SQL_INSTALL_TABLES, [
          DATABASE,
          `${PREFIX.replace(/_/g, '\\_')}%`,
        ]);
        await conn.query('SET FOREIGN_KEY_CHECKS = 0');
        for (const { name } of tables) await conn.query(`TRUNCATE TABLE \`${name}\``);
      } finally {
        await conn.end();
      }
    },
    async enqueue(jobs: readonly BenchJob[]) {
      const started = performance.now();
      await open().enqueueBatch(jobs);
      return (performance.now() - started) / 1000;
    },
    drain(setting, limitMs, hooks) {
      const label = `sluice ×${setting.processes ?? 1} c${setting.concurrency}`;
      return timedDrain(label, SCRIPT, setting, {}, { anyLeft, countLeft, ...hooks }, limitMs);
    },
    consume: (setting) => startConsumers(SCRIPT, setting, {}),
    pickupLatency(setting, samples, delayed) {
      return measurePickup(
        SCRIPT,
        setting,
        {},
        (probe, dueAt) =>
          open().enqueue({
            name: JOB_NAME,
            queue: BENCH_QUEUE,
            payload: { probe },
            ...(dueAt === null ? {} : { runAt: new Date(dueAt) }),
          }),
        samples,
        delayed,
      );
    },
    async teardown() {
      await sluice?.close();
    },
  };
}

function serverUrl(url: string): string {
  const server = new URL(url);
  server.pathname = '/';
  return server.toString();
}

/** One job per sluice.enqueue call (a single enqueuer child's producer), on the peer's install. */
export async function sluiceProducer(): Promise<Producer> {
  const sluice = createSluice({ url: peerUrl(), tablePrefix: PREFIX, logger: logger() });
  await sluice.knex.raw('SELECT 1');
  return {
    async enqueueOne(payload) {
      await sluice.enqueue({ name: JOB_NAME, queue: BENCH_QUEUE, payload });
    },
    close: () => sluice.close(),
  };
}

/** The child: one sluice worker on the bench queue with the setting's concurrency, started on 'go'. */
async function buildConsumers(setting: PeerSetting, onProbe: OnProbe): Promise<Consumers> {
  // A handler per job is all the harness adds: the probe's start time goes to the parent.
  const noop = defineJob<{ probe?: number }>({
    name: JOB_NAME,
    handle(payload) {
      if (payload.probe !== undefined) onProbe(payload.probe);
    },
  });
  const sluice = createSluice({ url: peerUrl(), tablePrefix: PREFIX, logger: logger() });
  await sluice.knex.raw('SELECT 1');
  const worker = sluice.worker({ queues: [BENCH_QUEUE], concurrency: setting.concurrency, jobs: [noop] });
  return {
    start: () => worker.start(),
    async stop() {
      await worker.stop();
      await sluice.close();
    },
  };
}

if (isMain(import.meta.url)) await runConsumerChild(buildConsumers);
