/**
 * The benchmark's own database: derived from MYSQL_URL's server (or the local default) with the
 * database name replaced, dropped and re-created at the start of every run, so no run sees
 * another's rows. Also reads what the header prints about the server.
 */
import { createConnection, type Connection, type RowDataPacket } from 'mysql2/promise';

const DEFAULT_URL = 'mysql://root@127.0.0.1:3306/test';
export const BENCH_DATABASE = 'sluice_bench';

export interface ServerFacts {
  readonly version: string;
  readonly maxAllowedPacket: number;
}

/** MYSQL_URL (or the local default) with its database replaced by `database`. */
export function benchUrl(database = BENCH_DATABASE, source = process.env.MYSQL_URL ?? DEFAULT_URL): string {
  const url = new URL(source);
  url.pathname = `/${database}`;
  return url.toString();
}

/** The URL for printing: password masked. */
export function redacted(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}

/** A plain mysql2 connection on the UTC session clock (as sluice's pool uses). */
export async function connectRaw(url: string): Promise<Connection> {
  const conn = await createConnection({ uri: url, supportBigNumbers: true, bigNumberStrings: false });
  await conn.query("SET time_zone = '+00:00'");
  return conn;
}

/** Drops and re-creates the benchmark database on the server `url` points at. */
export async function recreateDatabase(url: string): Promise<void> {
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

export async function readServerFacts(conn: Connection): Promise<ServerFacts> {
  const [rows] = await conn.query<RowDataPacket[]>('SELECT VERSION() AS version, @@max_allowed_packet AS packet');
  return { version: String(rows[0]?.version), maxAllowedPacket: Number(rows[0]?.packet) };
}

/** The raw ceiling's table: an empty copy of sluice's jobs table, same columns and indexes. */
export async function createRawCopy(conn: Connection, rawTable: string, sluiceJobsTable: string): Promise<void> {
  await conn.query(`CREATE TABLE \`${rawTable}\` LIKE \`${sluiceJobsTable}\``);
}

export async function truncate(conn: Connection, tables: readonly string[]): Promise<void> {
  for (const table of tables) await conn.query(`TRUNCATE TABLE \`${table}\``);
}
