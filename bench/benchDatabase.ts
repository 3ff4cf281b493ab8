/**
 * The benchmark's own database and the two installs in it: sluice's (createSluice + migrate,
 * table prefix `bench_`) and the raw ceiling's table (`CREATE TABLE … LIKE` sluice's jobs
 * table). The database is derived from MYSQL_URL's server (or the local default) with its name
 * replaced, and is dropped and re-created at the start of every run.
 */
import { type Connection, createConnection, type RowDataPacket } from 'mysql2/promise';
import { pino } from 'pino';
import { createSluice, type Sluice } from 'sluice';
import { connectRaw } from './rawConnection.ts';

const DEFAULT_URL = 'mysql://root@127.0.0.1:3306/test';
/** Dropped and re-created by every run; BENCH_DATABASE names another, for runs side by side. */
const BENCH_DATABASE = process.env.BENCH_DATABASE ?? 'sluice_bench';
const PREFIX = 'bench_';

export interface Bench {
  /** URL of the benchmark database (children get it as MYSQL_URL, never in argv). */
  readonly url: string;
  readonly prefix: string;
  readonly sluice: Sluice;
  /** A plain mysql2 connection: raw inserts, truncation, the drain's count probes. */
  readonly conn: Connection;
  readonly tables: {
    readonly jobs: string;
    readonly batches: string;
    readonly jobHistory: string;
    /** Filled only with BENCH_OTEL=1: the context each traced job carries. */
    readonly jobTraces: string;
    /** Payloads over 1 KiB, stored apart from their jobs. */
    readonly jobPayloads: string;
    readonly raw: string;
  };
  readonly server: { readonly version: string; readonly maxAllowedPacket: number };
  close(): Promise<void>;
}

/** `database` lets a bench that runs beside others (bench stall) keep its own. */
export async function openBench(database = BENCH_DATABASE): Promise<Bench> {
  const url = benchUrl(database);
  await recreateDatabase(url);
  const sluice = createSluice({ url, tablePrefix: PREFIX, logger: pino({ level: 'warn' }, pino.destination(2)) });
  await sluice.migrate();
  const conn = await connectRaw(url);
  const tables = {
    jobs: `${PREFIX}jobs`,
    batches: `${PREFIX}batches`,
    jobHistory: `${PREFIX}job_history`,
    jobTraces: `${PREFIX}job_traces`,
    jobPayloads: `${PREFIX}job_payloads`,
    raw: 'raw_jobs',
  };
  await conn.query(`CREATE TABLE \`${tables.raw}\` LIKE \`${tables.jobs}\``);
  const [rows] = await conn.query<RowDataPacket[]>('SELECT VERSION() AS version, @@max_allowed_packet AS packet');
  const server = { version: String(rows[0]?.version), maxAllowedPacket: Number(rows[0]?.packet) };
  const close = async () => {
    await conn.end();
    await sluice.close();
  };
  return { url, prefix: PREFIX, sluice, conn, tables, server, close };
}

export async function truncate(conn: Connection, tables: readonly string[]): Promise<void> {
  for (const table of tables) await conn.query(`TRUNCATE TABLE \`${table}\``);
}

/** MYSQL_URL (or the local default) with its database replaced. */
function benchUrl(database: string): string {
  const url = new URL(process.env.MYSQL_URL ?? DEFAULT_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

async function recreateDatabase(url: string): Promise<void> {
  const server = new URL(url);
  const database = decodeURIComponent(server.pathname.slice(1));
  server.pathname = '/';
  const conn = await createConnection({ uri: server.toString() });
  try {
    await conn.query(`DROP DATABASE IF EXISTS \`${database}\``);
    await conn.query(`CREATE DATABASE \`${database}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
  } finally {
    await conn.end();
  }
}
