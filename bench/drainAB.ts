/**
 * `npm run bench -- ab --base DIR [--rounds 3] [--jobs 100000] [--concurrency 500]
 * [--workers 1] [--jobs-dir-b DIR] [--payload small|kb|BYTES]`: the drain of this checkout (B)
 * against another checkout of sluice (A, e.g. `git archive <commit> | tar -x -C DIR` with a
 * node_modules link), alternating A and B for each round on the same server, each side with its
 * own install (prefix `a_` / `b_`, migrated by its own code) in a throwaway database. Each drain is
 * bench/drain.ts's: `sluice work` processes at --concurrency, other options at their defaults (as
 * the grid runs sluice), the clock from the last 'ready' to an empty queue. `--payload kb`: payloads of 0–16 KiB (makeKilobyteJobs); a
 * number: each payload that many bytes; by default ~100 bytes. Prints each round and the medians,
 * then one JSON line, with the statements each drain's workers sent, by first keyword (a count
 * that the machine's load does not blur), and the redo bytes per job of each side's enqueue and
 * drain, and the drain's redo flushes and fsyncs per job (whole-server counters: they mean something
 * on a server the bench has alone). `npm run
 * bench` measures far more (and takes ~10 minutes); this is the focused A/B of one drain setting.
 */
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { createConnection } from 'mysql2/promise';
import { pino } from 'pino';
import type { Sluice } from 'sluice';
import { truncate } from './benchDatabase.ts';
import { type DrainMeasurement, measureDrain } from './drain.ts';
import { median } from './median.ts';
import { progress } from './progress.ts';
import { connectRaw } from './rawConnection.ts';
import { BENCH_QUEUE, makeJobs, makeKilobyteJobs, makeSizedJobs } from './workload.ts';

const { values: v } = parseArgs({
  options: {
    base: { type: 'string' },
    rounds: { type: 'string', default: '3' },
    jobs: { type: 'string', default: '100000' },
    concurrency: { type: 'string', default: '500' },
    workers: { type: 'string', default: '1' },
    'jobs-dir-b': { type: 'string' },
    payload: { type: 'string', default: 'small' },
  },
});
if (!v.base) throw new Error('--base DIR: a checkout of the sluice to compare against');

interface Side {
  readonly label: string;
  readonly root: string;
  readonly prefix: string;
  readonly jobsDir: string;
  sluice: Sluice;
}

const here = resolve(import.meta.dirname, '..');
const server = new URL(process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test');
const database = `sluice_ab_${randomBytes(3).toString('hex')}`;
const url = new URL(server.toString());
url.pathname = `/${database}`;
const jobCount = Number(v.jobs);
const concurrency = Number(v.concurrency);
const workers = Number(v.workers);

async function openSide(label: string, root: string, prefix: string, jobsDir: string): Promise<Side> {
  const mod = (await import(pathToFileURL(join(root, 'src/index.ts')).href)) as typeof import('sluice');
  const sluice = mod.createSluice({ url: url.toString(), tablePrefix: prefix, logger: pino({ level: 'warn' }) });
  await sluice.migrate();
  return { label, root, prefix, jobsDir, sluice };
}

/** The jobs each drain starts from: --payload small (~100 B), kb (0–16 KiB), or a size in bytes. */
function workload(count: number) {
  if (v.payload === 'kb') return makeKilobyteJobs(count);
  if (/^\d+$/.test(v.payload)) return makeSizedJobs(count, Number(v.payload));
  return makeJobs(count);
}

/** Params: none. The server's redo bytes written so far (Innodb_os_log_written): whole-server, so meaningful alone on it. */
const SQL_REDO_BYTES = "SHOW GLOBAL STATUS LIKE 'Innodb_os_log_written'";

async function redoBytes(conn: Awaited<ReturnType<typeof connectRaw>>): Promise<number> {
  const [rows] = await conn.query(SQL_REDO_BYTES);
  return Number((rows as { Value: string }[])[0]?.Value ?? 0);
}

/**
 * Params: none. The server's redo log writes and fsyncs so far: Innodb_log_writes (on MariaDB
 * 10.8+ each one a write that a commit fsyncs at innodb_flush_log_at_trx_commit=1; MySQL counts
 * Innodb_os_log_fsyncs) and Innodb_data_fsyncs (every fsync, the log's included on MariaDB).
 * Whole-server, as the redo bytes.
 */
const SQL_FSYNCS =
  "SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_log_writes', 'Innodb_os_log_fsyncs', 'Innodb_data_fsyncs')";

async function fsyncs(conn: Awaited<ReturnType<typeof connectRaw>>): Promise<{ log: number; all: number }> {
  const [rows] = await conn.query(SQL_FSYNCS);
  const of = (name: string) =>
    Number((rows as { Variable_name: string; Value: string }[]).find((r) => r.Variable_name === name)?.Value ?? 0);
  return { log: of('Innodb_os_log_fsyncs') || of('Innodb_log_writes'), all: of('Innodb_data_fsyncs') };
}

/** A drain, with the redo bytes per job its enqueue and its drain wrote (on a server the bench has alone). */
type SideDrain = DrainMeasurement & {
  readonly redoPerJob: { readonly enqueue: number; readonly drain: number };
  /** The drain's redo flushes and all fsyncs per job (whole-server: see SQL_FSYNCS). */
  readonly fsyncsPerJob: { readonly log: number; readonly all: number };
};

async function drain(side: Side, conn: Awaited<ReturnType<typeof connectRaw>>): Promise<SideDrain> {
  await truncate(conn, [`${side.prefix}jobs`, `${side.prefix}batches`, `${side.prefix}job_history`]);
  // A checkout from before payloads were stored apart has no such table.
  await conn.query(`DELETE FROM \`${side.prefix}job_payloads\``).catch(() => undefined);
  const beforeEnqueue = await redoBytes(conn);
  await side.sluice.enqueueBatch(workload(jobCount));
  const beforeDrain = await redoBytes(conn);
  const fsyncsBefore = await fsyncs(conn);
  // From the side's sources, as abSide.ts runs them: a checkout has no dist/ until it is built.
  const args = ['--import', 'tsx', '--conditions=sluice-source', join(side.root, 'src/cli/sluice.ts'), 'work'];
  args.push('--queues', BENCH_QUEUE);
  args.push('--concurrency', String(concurrency));
  args.push('--jobs', side.jobsDir, '--prefix', side.prefix);
  const target = {
    label: `${side.label} ×${workers} c${concurrency}`,
    table: `${side.prefix}jobs`,
    queue: BENCH_QUEUE,
    workers,
    args,
    env: { LOG_LEVEL: 'warn', MYSQL_URL: url.toString() },
  };
  const measured = await measureDrain(conn, target, jobCount);
  const afterDrain = await redoBytes(conn);
  const fsyncsAfter = await fsyncs(conn);
  // Per job drained: a drain cut off at its time limit drained fewer than it enqueued.
  const perJob3 = (count: number) => Number((count / measured.jobs).toFixed(3));
  const perJob = (bytes: number) => Math.round(bytes / jobCount);
  return {
    ...measured,
    redoPerJob: { enqueue: perJob(beforeDrain - beforeEnqueue), drain: perJob(afterDrain - beforeDrain) },
    fsyncsPerJob: {
      log: perJob3(fsyncsAfter.log - fsyncsBefore.log),
      all: perJob3(fsyncsAfter.all - fsyncsBefore.all),
    },
  };
}

const admin = await createConnection({ uri: server.toString() });
await admin.query(`CREATE DATABASE \`${database}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
try {
  const a = await openSide('A', resolve(v.base), 'a_', join(resolve(v.base), 'bench/jobs'));
  const b = await openSide('B', here, 'b_', resolve(v['jobs-dir-b'] ?? join(here, 'bench/jobs')));
  const conn = await connectRaw(url.toString());
  const rates: Record<'A' | 'B', number[]> = { A: [], B: [] };
  const statements: Record<'A' | 'B', Record<string, number>[]> = { A: [], B: [] };
  const redo: Record<'A' | 'B', SideDrain['redoPerJob'][]> = { A: [], B: [] };
  const synced: Record<'A' | 'B', SideDrain['fsyncsPerJob'][]> = { A: [], B: [] };
  try {
    for (let round = 1; round <= Number(v.rounds); round++) {
      for (const side of round % 2 === 1 ? [a, b] : [b, a]) {
        const m = await drain(side, conn);
        rates[side.label as 'A' | 'B'].push(m.jobsPerSec);
        statements[side.label as 'A' | 'B'].push(m.statements);
        redo[side.label as 'A' | 'B'].push(m.redoPerJob);
        synced[side.label as 'A' | 'B'].push(m.fsyncsPerJob);
        progress(
          `round ${round} ${side.label}: ${Math.round(m.jobsPerSec)} jobs/s (${m.jobs} jobs in ${m.seconds.toFixed(2)} s; ` +
            `redo bytes per job: enqueue ${m.redoPerJob.enqueue}, drain ${m.redoPerJob.drain}; ` +
            `drain fsyncs per job: log ${m.fsyncsPerJob.log}, all ${m.fsyncsPerJob.all})`,
        );
      }
    }
  } finally {
    await conn.end();
    await a.sluice.close();
    await b.sluice.close();
  }
  const result = {
    jobs: jobCount,
    workers,
    concurrency,
    payload: v.payload,
    A: {
      root: resolve(v.base),
      jobsPerSec: rates.A.map(Math.round),
      median: Math.round(median(rates.A)),
      statements: statements.A,
      redoBytesPerJob: redo.A,
      fsyncsPerJob: synced.A,
    },
    B: {
      root: here,
      jobsPerSec: rates.B.map(Math.round),
      median: Math.round(median(rates.B)),
      statements: statements.B,
      redoBytesPerJob: redo.B,
      fsyncsPerJob: synced.B,
    },
    ratio: Number((median(rates.B) / median(rates.A)).toFixed(3)),
  };
  process.stdout.write(`A ${result.A.jobsPerSec.join(' / ')} (median ${result.A.median}) jobs/s\n`);
  process.stdout.write(`B ${result.B.jobsPerSec.join(' / ')} (median ${result.B.median}) jobs/s\n`);
  process.stdout.write(`${JSON.stringify(result)}\n`);
} finally {
  await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
  await admin.end();
}
