import { fileURLToPath } from 'node:url';
import mysql from 'mysql2/promise';
import { pino } from 'pino';
import { createSluice, type Sluice } from '../../src/index.ts';
import { type LogLine, type SluiceProcess, spawnSluice } from '../helpers/spawnSluice.ts';
import { waitFor } from '../helpers/waitFor.ts';
import type { GaleraCluster } from './galeraCluster.ts';

/**
 * What the Galera suite's files share on top of a running cluster: one database for sluice,
 * reachable through every node; real `sluice work` / `sluice maintenance` processes pointed at
 * chosen nodes; reads that see the cluster's latest commits; and the counts the issue asks for.
 */

/**
 * test/fixtures/galeraJobs: `effect` (exactly-once, one row per commit), `run` (at-least-once, one
 * row per run), `graphNode` (a workflow's job: its order proven by commits and by one clock) and
 * `span` (a run's start and end by one node's clock, for limits).
 */
export const GALERA_JOBS = fileURLToPath(new URL('../fixtures/galeraJobs', import.meta.url));

const silent = pino({ level: 'silent' });

export interface ClusterDatabase {
  readonly name: string;
  /** One URL per node, to this database. */
  readonly urls: readonly string[];
  /** One pool per node, reading with wsrep_sync_wait=1 (each read sees every commit the cluster made before it). */
  readonly nodes: readonly mysql.Pool[];
  /** A sluice instance on node `index` (closed by close()). */
  sluice(index: number, options?: Parameters<typeof createSluice>[0]): Sluice;
  close(): Promise<void>;
}

/**
 * Creates database `name` through node 1, migrates it, and creates the fixture jobs' tables: no
 * unique key but the AUTO_INCREMENT id (a plain index on job_id, for counting, is not certified).
 */
export async function clusterDatabase(cluster: Pick<GaleraCluster, 'urls'>, name: string): Promise<ClusterDatabase> {
  const urls = cluster.urls.map((u) => {
    const url = new URL(u);
    url.pathname = `/${name}`;
    return url.toString();
  });
  const admin = await mysql.createConnection({ uri: cluster.urls[0] as string });
  await admin.query(`CREATE DATABASE \`${name}\``);
  await admin.end();
  const nodes = urls.map((uri) => {
    const pool = mysql.createPool({ uri, connectionLimit: 4, timezone: 'Z' });
    pool.on('connection', (c) => {
      c.query('SET SESSION wsrep_sync_wait = 1');
    });
    return pool;
  });
  const opened: Sluice[] = [];
  const sluice = (index: number, options: Parameters<typeof createSluice>[0] = {}) => {
    const s = createSluice({ url: urls[index], logger: silent, ...options });
    opened.push(s);
    return s;
  };
  await sluice(0).migrate();
  const [node1] = nodes;
  await node1?.query(`CREATE TABLE galera_effects (
    id     BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    job_id BIGINT UNSIGNED NOT NULL,
    batch  INT NOT NULL,
    pid    INT NOT NULL,
    KEY ix_job (job_id)
  ) ENGINE=InnoDB`);
  await node1?.query(`CREATE TABLE galera_runs (
    id     BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    job_id BIGINT UNSIGNED NOT NULL,
    pid    INT NOT NULL,
    KEY ix_job (job_id)
  ) ENGINE=InnoDB`);
  return {
    name,
    urls,
    nodes,
    sluice,
    async close() {
      await Promise.all(opened.map((s) => s.close()));
      await Promise.all(nodes.map((p) => p.end()));
    },
  };
}

/**
 * The rows of a read on a node pool. A causal read (wsrep_sync_wait) waits for the cluster to order
 * it; while the cluster is still evicting a SIGKILLed node nothing is ordered, and on a loaded
 * machine that can outlast repl.causal_read_timeout, which the server reports as
 * ER_LOCK_WAIT_TIMEOUT. Such a read is asked again (a few times), as a client on a cluster would.
 */
export async function readOn<Row = Record<string, unknown>>(
  pool: mysql.Pool,
  sql: string,
  params: unknown[] = [],
): Promise<Row[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      const [rows] = (await pool.query(sql, params)) as unknown as [Row[]];
      return rows;
    } catch (error) {
      if ((error as { errno?: number }).errno !== CAUSAL_READ_TIMED_OUT || attempt === CAUSAL_READ_ATTEMPTS)
        throw error;
    }
  }
}

const CAUSAL_READ_TIMED_OUT = 1205;
const CAUSAL_READ_ATTEMPTS = 4;

/** One row of a read on a node pool, or 0-filled. */
export async function scalarOn(pool: mysql.Pool, sql: string, params: unknown[] = []): Promise<number> {
  const rows = await readOn(pool, sql, params);
  return Number(Object.values(rows[0] ?? {})[0] ?? 0);
}

export interface WorkerSpec {
  readonly node: number;
  readonly queues: string;
  readonly claim?: 'random-head' | 'skip-locked';
  readonly concurrency?: number;
  readonly heartbeatIntervalMs?: number;
  readonly lockTimeoutMs?: number;
  /** Variables for the process (the timing fixtures' SLUICE_GALERA_CLOCK_URL). */
  readonly env?: Readonly<Record<string, string>>;
}

export interface MaintenanceSpec {
  readonly node: number;
  readonly schedule?: string;
  readonly leaseMs?: number;
  readonly lockTimeoutMs?: number;
  readonly missedHeartbeats?: number;
}

/** Process logs at info: failures, retries, conflicts, errors, changes (per-job lines are debug). */
const INFO = { logLevel: 'info' } as const;

/** `sluice work` on node `spec.node` running the Galera fixture jobs. */
export function startWorker(db: ClusterDatabase, spec: WorkerSpec): SluiceProcess {
  const args = ['--url', db.urls[spec.node] as string, '--jobs', GALERA_JOBS, '--queues', spec.queues];
  args.push('--concurrency', String(spec.concurrency ?? 20), '--claim', spec.claim ?? 'random-head');
  args.push('--poll-interval-ms', '200');
  if (spec.heartbeatIntervalMs) args.push('--heartbeat-interval-ms', String(spec.heartbeatIntervalMs));
  if (spec.lockTimeoutMs) args.push('--lock-timeout-ms', String(spec.lockTimeoutMs));
  return spawnSluice('work', args, spec.env ? { ...INFO, env: spec.env } : INFO);
}

/** `sluice maintenance` on node `spec.node`. */
export function startMaintenance(db: ClusterDatabase, spec: MaintenanceSpec): SluiceProcess {
  const args = ['--url', db.urls[spec.node] as string, '--schedule', spec.schedule ?? '*/2 * * * * *'];
  args.push('--jitter-ms', '200');
  if (spec.leaseMs) args.push('--lease-ms', String(spec.leaseMs));
  if (spec.lockTimeoutMs) args.push('--lock-timeout-ms', String(spec.lockTimeoutMs));
  if (spec.missedHeartbeats) args.push('--missed-heartbeats', String(spec.missedHeartbeats));
  return spawnSluice('maintenance', args, INFO);
}

/** Stops processes (SIGINT) that still run; a process whose node is down may need its drain deadline. */
export async function stopAll(processes: readonly SluiceProcess[]): Promise<void> {
  await Promise.all(processes.filter((p) => p.running).map((p) => p.stop()));
}

/** What the issue counts, over every process's log: each must be 0 in a crash-free drain. */
export interface FailureCounts {
  /** job:failed lines (attempts counted as failed). */
  readonly failed: number;
  readonly retried: number;
  readonly dead: number;
  /** job:conflicted: every run of an exactly-once transaction conflicted (given back uncounted). */
  readonly conflicted: number;
  readonly workerErrors: number;
  readonly claimsLost: number;
  readonly maintenanceErrors: number;
}

/** The log event each count of FailureCounts counts. */
const COUNTED: Readonly<Record<keyof FailureCounts, string>> = {
  failed: 'job:failed',
  retried: 'job:retried',
  dead: 'job:dead',
  conflicted: 'job:conflicted',
  workerErrors: 'worker:error',
  claimsLost: 'claim:lost',
  maintenanceErrors: 'maintenance:error',
};

export function failureCounts(processes: readonly SluiceProcess[]): FailureCounts {
  const counts = Object.entries(COUNTED).map(([key, event]) => [key, linesOf(processes, event).length]);
  return Object.fromEntries(counts) as Record<keyof FailureCounts, number>;
}

/**
 * The first lines of each event failureCounts counts, for an assertion's message: a count that is
 * not 0 then says what happened, in the failure CI prints last.
 */
export function problemLines(processes: readonly SluiceProcess[]): string {
  return [...Object.values(COUNTED).flatMap((event) => linesOf(processes, event).slice(0, 3)), ...releases(processes)]
    .map((line) => JSON.stringify(line).slice(0, 2000))
    .join('\n');
}

/** Maintenance passes that took claims back (a worker declared dead, or a claim past its lock timeout). */
function releases(processes: readonly SluiceProcess[]): LogLine[] {
  return linesOf(processes, 'maintenance:completed').filter((line) => {
    const tasks = (line.tasks ?? {}) as Record<string, { claims?: number } | undefined>;
    return (tasks.releaseDeadWorkers?.claims ?? 0) + (tasks.releaseStaleClaims?.claims ?? 0) > 0;
  });
}

/** Certification failures and brute-force aborts so far, summed over the nodes that answer. */
export async function conflictsSoFar(db: ClusterDatabase): Promise<number> {
  let sum = 0;
  for (const pool of db.nodes) {
    try {
      const [rows] = (await pool.query(
        "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_local_cert_failures', 'wsrep_local_bf_aborts')",
      )) as unknown as [{ Value: string }[]];
      for (const r of rows) sum += Number(r.Value);
    } catch {
      // a node that is down has no counters to add
    }
  }
  return sum;
}

/** Waits until node `index` holds no live job of `queue`. */
export async function waitDrained(
  db: ClusterDatabase,
  queue: string,
  { index = 0, timeoutMs = 300_000 }: { index?: number; timeoutMs?: number } = {},
): Promise<void> {
  const pool = db.nodes[index] as mysql.Pool;
  await waitFor(async () => (await scalarOn(pool, 'SELECT COUNT(*) FROM sluice_jobs WHERE queue = ?', [queue])) === 0, {
    what: `queue ${queue} drained`,
    timeoutMs,
    intervalMs: 250,
  });
}

/**
 * How a batch's jobs were done, read on node `index` after the drain: its size, jobs finished
 * (job_history: exactly-once writes it in the job's own transaction), still live, dead, and per
 * finished job how many effect rows it committed — `once` must be the size, the rest 0.
 */
export async function batchTally(
  db: ClusterDatabase,
  batchId: number,
  index = 0,
): Promise<{
  size: number;
  finished: number;
  live: number;
  dead: number;
  once: number;
  missing: number;
  doubled: number;
  retried: number;
}> {
  const pool = db.nodes[index] as mysql.Pool;
  const size = await scalarOn(pool, 'SELECT size FROM sluice_batches WHERE id = ?', [batchId]);
  const finished = await scalarOn(pool, 'SELECT COUNT(*) FROM sluice_job_history WHERE batch_id = ?', [batchId]);
  const live = await scalarOn(pool, 'SELECT COUNT(*) FROM sluice_jobs WHERE batch_id = ?', [batchId]);
  const dead = await scalarOn(pool, 'SELECT COUNT(*) FROM sluice_dead_jobs WHERE batch_id = ?', [batchId]);
  const retried = await scalarOn(
    pool,
    'SELECT COUNT(*) FROM sluice_job_history WHERE batch_id = ? AND retry_times > 0',
    [batchId],
  );
  const rows = await readOn<{ job_id: number; n: number }>(
    pool,
    `SELECT h.job_id, COUNT(e.id) AS n
     FROM sluice_job_history h LEFT JOIN galera_effects e ON e.job_id = h.job_id
     WHERE h.batch_id = ?
     GROUP BY h.job_id`,
    [batchId],
  );
  let once = 0;
  let missing = 0;
  let doubled = 0;
  for (const r of rows) {
    const n = Number(r.n);
    if (n === 0) missing++;
    else if (n === 1) once++;
    else doubled++;
  }
  return { size, finished, live, dead, once, missing, doubled, retried };
}

/** Log lines of the given event across processes. */
export function linesOf(processes: readonly SluiceProcess[], event: string): LogLine[] {
  return processes.flatMap((p) => p.events(event));
}

export function report(line: string): void {
  process.stdout.write(`[galera] ${line}\n`);
}
