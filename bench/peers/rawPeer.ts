/**
 * The raw MariaDB claim loop as a row of the grid, measured by the peers' harness (peer.ts) like
 * every other system: rows written by plain multi-row INSERTs into a table shaped like sluice's jobs
 * table, drained by consumer children that each run rawLoop.ts's claim-and-delete transaction
 * (SELECT … FOR UPDATE SKIP LOCKED, DELETE, COMMIT) over one connection, the cell's concurrency as
 * the jobs per claim, no history. It keeps nothing of a finished job. No pickup probe: it is the
 * drain's ceiling, not a queue anyone runs.
 * Run as a script, this file is the consumer child (its URL as MYSQL_URL, its table in the setting).
 */
import type { Connection, RowDataPacket } from 'mysql2/promise';
import { connectRaw } from '../rawConnection.ts';
import { rawInsertJobs } from '../rawInsert.ts';
import { claimAndDelete, retryingConflicts } from '../rawLoop.ts';
import { BENCH_QUEUE, type BenchJob, JOB_NAME, payloadLength } from '../workload.ts';
import { type Consumers, isMain, runConsumerChild, startConsumers } from './consumerChild.ts';
import { mysqlDurability } from './mysqlDurability.ts';
import { type Peer, type PeerSetting, type Producer, timedDrain } from './peer.ts';

const SCRIPT = new URL(import.meta.url).pathname;
const IDLE_MS = 20;
/** Rows per INSERT: as many as half the packet holds at the largest row, at most this many. */
const MAX_ROWS_PER_INSERT = 5_000;

/** One row per cell: one connection per process, `concurrency` jobs per claim. */
export function rawGridSetting(processes: number, concurrency: number, table: string): PeerSetting {
  return {
    setting: 'best',
    concurrency,
    processes,
    describe: `${processes} process(es) × 1 connection, claim-and-delete ${concurrency} jobs per transaction, no history`,
    options: { table },
  };
}

/** Params: ?1 queue. 1 while any job of the queue is left: one index seek. */
const sqlAnyLeft = (table: string) => `
SELECT 1 AS one
FROM \`${table}\`
WHERE queue = ?
LIMIT 1`;

/** Params: ?1 queue. The jobs left (walks them: progress lines and cut-offs only). */
const sqlCount = (table: string) => `
SELECT COUNT(*) AS n
FROM \`${table}\`
WHERE queue = ?`;

export function rawPeer(url: string, table: string): Peer {
  let conn: Connection | undefined;
  let packet = 0;
  const open = () => {
    if (!conn) throw new Error('raw peer: setup() first');
    return conn;
  };
  const anyLeft = async () => (await open().query<RowDataPacket[]>(sqlAnyLeft(table), [BENCH_QUEUE]))[0].length > 0;
  const countLeft = async () => Number((await open().query<RowDataPacket[]>(sqlCount(table), [BENCH_QUEUE]))[0][0]?.n);
  const server = new URL(url);
  return {
    name: 'raw claim loop',
    server: `MySQL/MariaDB at ${server.hostname}:${server.port || 3306}`,
    keeps: 'nothing (deleted)',
    settings: [],
    available: async () => true,
    async setup() {
      conn = await connectRaw(url);
      const [rows] = await conn.query<RowDataPacket[]>('SELECT VERSION() AS v, @@max_allowed_packet AS p');
      packet = Number(rows[0]?.p);
      return String(rows[0]?.v);
    },
    durability: () => mysqlDurability(open()),
    async clear() {
      await open().query(`TRUNCATE TABLE \`${table}\``);
    },
    async enqueue(jobs: readonly BenchJob[]) {
      const largest = jobs.reduce((most, j) => Math.max(most, payloadLength(j)), 0) + 256;
      const rows = Math.max(1, Math.min(MAX_ROWS_PER_INSERT, Math.floor(packet / 2 / largest)));
      const started = performance.now();
      const inserted = await rawInsertJobs(open(), table, jobs, rows);
      if (inserted !== jobs.length) throw new Error(`raw insert wrote ${inserted} of ${jobs.length} rows`);
      return (performance.now() - started) / 1000;
    },
    drain(setting, limitMs, hooks) {
      const label = `raw ×${setting.processes ?? 1} c${setting.concurrency}`;
      return timedDrain(label, SCRIPT, setting, { MYSQL_URL: url }, { anyLeft, countLeft, ...hooks }, limitMs);
    },
    consume: (setting) => startConsumers(SCRIPT, setting, { MYSQL_URL: url }),
    pickupLatency() {
      return Promise.reject(new Error('raw claim loop: no pickup probe'));
    },
    async teardown() {
      await conn?.end();
      conn = undefined;
    },
  };
}

/** Params: ?1 queue, ?2 name, ?3 payload JSON. One row, committed on its own (autocommit). */
const sqlInsertOne = (table: string) => `
INSERT INTO \`${table}\` (queue, name, payload, priority, run_at, created_at)
VALUES (?, ?, ?, 0, NOW(3), NOW(3))`;

/**
 * One job per autocommit INSERT (a single enqueuer child's producer; MYSQL_URL): one round trip, one
 * durable commit, the floor of a single enqueue on this server. An INSERT that a draining claim
 * loop's locks turn into a deadlock (1213) is sent again, as an application would. Sent as text,
 * its values escaped by mysql2 (`query`), as an application writes it; BENCH_RAW_PREPARED=1 sends
 * it prepared (`execute`), as sluice's own single enqueue is: the floor of that protocol.
 */
export async function rawProducer(table: string): Promise<Producer> {
  const url = process.env.MYSQL_URL;
  if (!url) throw new Error('raw producer: set MYSQL_URL');
  const conn = await connectRaw(url);
  const sql = sqlInsertOne(table);
  const prepared = process.env.BENCH_RAW_PREPARED === '1';
  const send = (values: string[]) => (prepared ? conn.execute(sql, values) : conn.query(sql, values));
  return {
    async enqueueOne(payload) {
      for (;;) {
        try {
          await send([BENCH_QUEUE, JOB_NAME, JSON.stringify(payload)]);
          return;
        } catch (error) {
          if ((error as { errno?: number }).errno !== 1213) throw error;
        }
      }
    },
    close: () => conn.end(),
  };
}

/** The child: one connection looping claim-and-delete of `concurrency` jobs from 'go' to 'stop'. */
async function buildConsumers(setting: PeerSetting): Promise<Consumers> {
  const url = process.env.MYSQL_URL;
  if (!url) throw new Error('raw peer child: set MYSQL_URL');
  const table = String(setting.options.table);
  const conn = await connectRaw(url);
  let stopping = false;
  let loop: Promise<void> = Promise.resolve();
  const run = async () => {
    while (!stopping) {
      const done = await retryingConflicts(() => claimAndDelete(conn, table, BENCH_QUEUE, setting.concurrency));
      if (done === 0) await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    }
  };
  return {
    start() {
      loop = run();
    },
    async stop() {
      stopping = true;
      await loop;
      await conn.end();
    },
  };
}

if (isMain(import.meta.url)) await runConsumerChild(buildConsumers);
