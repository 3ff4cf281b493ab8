import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, inject } from 'vitest';
import { createSluice, type Sluice } from '../../src/index.ts';
import type { SluiceOptions } from '../../src/options.ts';
import { emptyTables, readLiveTableStats } from './emptyTables.ts';
import { copyTemplateDatabase } from './templateDatabase.ts';

export interface TestDatabase {
  /** URL of this file's own database. */
  readonly url: string;
  readonly name: string;
  /** A sluice instance on that database, migrated, with prefix `sluice_`. */
  readonly sluice: Sluice;
  /** Another sluice instance on the same database (own pool, own options). Closed after the file. */
  open(options?: SluiceOptions): Sluice;
  /** Plain SQL for tests that put rows into a state directly. */
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
}

/** Silent unless LOG_LEVEL asks for more. */
export const testLogger = pino({ level: process.env.LOG_LEVEL ?? 'silent' });

export interface TestDatabaseOptions {
  /** Empty every sluice table before each test. @defaultValue true */
  truncate?: boolean;
  /**
   * Run every migration on an empty database instead of copying the run's migrated template
   * (templateDatabase.ts): for the tests of the migrations themselves. @defaultValue false
   */
  migrateFromScratch?: boolean;
}

/**
 * One migrated database per test file (sluice_t_<label>_<random>, a copy of the run's migrated
 * template), every sluice table emptied before each test (emptyTables.ts), dropped after the
 * file only if every test passed, so that a failure leaves its rows to inspect.
 */
export function useTestDatabase(label: string, options: TestDatabaseOptions = {}): TestDatabase {
  const name = `sluice_t_${label.replace(/[^a-z0-9_]/gi, '_').slice(0, 30)}_${randomBytes(3).toString('hex')}`;
  const server = new URL(inject('mysqlUrl'));
  const url = new URL(server.toString());
  url.pathname = `/${name}`;
  let admin: mysql.Connection | undefined;
  let sluice: Sluice | undefined;
  const opened: Sluice[] = [];
  let failed = false;

  beforeAll(async () => {
    // The library's handshake allowance (src/db/connect.ts): under a full run's load a connect past
    // the server's back_log waits for resent SYNs, and mysql2's 10 s default failed a file here.
    admin = await mysql.createConnection({ uri: server.toString(), connectTimeout: 20_000 });
    await readLiveTableStats(admin);
    if (options.migrateFromScratch) await admin.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4`);
    else await copyTemplateDatabase(admin, inject('templateDatabase'), name);
    sluice = createSluice({ url: url.toString(), logger: testLogger });
    // On a copy this applies nothing; it still reads the migrations table as any install does.
    await sluice.migrate();
  });

  beforeEach(async () => {
    if (options.truncate === false || !admin) return;
    await emptyTables(admin, name);
  });

  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') failed = true;
  });

  afterAll(async () => {
    await Promise.all([...opened, sluice].map((s) => s?.close()));
    if (!failed) await admin?.query(`DROP DATABASE IF EXISTS \`${name}\``);
    else process.stderr.write(`test database ${name} kept for inspection (a test failed)\n`);
    await admin?.end();
  });

  return {
    url: url.toString(),
    name,
    get sluice(): Sluice {
      if (!sluice) throw new Error('useTestDatabase: the database is ready only inside tests and hooks');
      return sluice;
    },
    open(extra: SluiceOptions = {}): Sluice {
      const instance = createSluice({ url: url.toString(), logger: testLogger, ...extra });
      opened.push(instance);
      return instance;
    },
    async query<T>(sql: string, params: unknown[] = []): Promise<T[]> {
      if (!sluice) throw new Error('useTestDatabase: not ready');
      const [rows] = (await sluice.knex.raw(sql, params as never[])) as [T[]];
      return rows;
    },
  };
}
