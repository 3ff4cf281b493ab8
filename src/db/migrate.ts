import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Knex } from 'knex';
import { SchemaVersionError } from '../errors.ts';
import type { Executor } from './executor.ts';
import { ER } from './mysqlErrors.ts';
import type { Tables } from './tables.ts';

const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/', import.meta.url));
const MIGRATION_FILE = /^\d{12}_[a-z0-9_]+\.(ts|js)$/;

interface MigrationModule {
  up(knex: Knex, tables: Tables): Promise<void>;
  down(knex: Knex, tables: Tables): Promise<void>;
}

/** The migrations this build knows, by name (file name without extension), in order. */
export async function knownMigrations(): Promise<string[]> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((f) => MIGRATION_FILE.test(f)).sort();
  return files.map((f) => f.replace(/\.(ts|js)$/, ''));
}

/** Feeds knex's migrator our files, with the table names of this install bound in. */
class PrefixedMigrationSource implements Knex.MigrationSource<string> {
  constructor(private readonly tables: Tables) {}

  getMigrations(): Promise<string[]> {
    return knownMigrations();
  }

  getMigrationName(name: string): string {
    return name;
  }

  async getMigration(name: string): Promise<Knex.Migration> {
    const files = (await readdir(MIGRATIONS_DIR)).filter((f) => f.replace(/\.(ts|js)$/, '') === name);
    const file = files[0];
    if (!file) throw new SchemaVersionError(`migration ${name} has no file in ${MIGRATIONS_DIR}`);
    const mod = (await import(pathToFileURL(join(MIGRATIONS_DIR, file)).href)) as MigrationModule;
    return { up: (knex) => mod.up(knex, this.tables), down: (knex) => mod.down(knex, this.tables) };
  }
}

/**
 * Applies every pending migration. knex's lock table serialises concurrent migrators. DDL
 * commits implicitly on MySQL/MariaDB, so migrations run outside transactions and each one is
 * re-runnable (CREATE … IF NOT EXISTS).
 */
export async function migrate(knex: Knex, tables: Tables): Promise<{ applied: string[] }> {
  const [, applied] = (await knex.migrate.latest({
    migrationSource: new PrefixedMigrationSource(tables),
    tableName: tables.migrations,
    disableTransactions: true,
  })) as [number, string[]];
  return { applied };
}

/** Params: none. Returns the names of the applied migrations. */
const sqlAppliedMigrations = (t: Tables) => `
SELECT name
FROM \`${t.migrations}\`
ORDER BY id`;

/**
 * Refuses a schema this build does not match: one with migrations we don't know (a newer
 * sluice migrated it) or one missing migrations we need (run `sluice migrate`).
 */
export async function assertSchemaCurrent(db: Executor, tables: Tables): Promise<void> {
  let applied: string[];
  try {
    applied = (await db.select<{ name: string }>(sqlAppliedMigrations(tables))).map((r) => r.name);
  } catch (error) {
    if ((error as { errno?: number }).errno === ER.NO_SUCH_TABLE) {
      throw new SchemaVersionError(
        `no sluice schema with prefix "${tables.prefix}" in this database: run \`sluice migrate\` (or sluice.migrate()) first`,
      );
    }
    throw error;
  }
  const known = await knownMigrations();
  const unknown = applied.filter((name) => !known.includes(name));
  if (unknown.length > 0) {
    throw new SchemaVersionError(
      `the database has migrations this build of sluice does not know (${unknown.join(', ')}): upgrade sluice before running it here`,
    );
  }
  const pending = known.filter((name) => !applied.includes(name));
  if (pending.length > 0) {
    throw new SchemaVersionError(`pending migrations (${pending.join(', ')}): run \`sluice migrate\` first`);
  }
}
