import mysql from 'mysql2/promise';
import { describe, expect, inject, it } from 'vitest';
import { fromKnex } from '../../src/db/executor.ts';
import { assertSchemaCurrent, knownMigrations } from '../../src/db/migrate.ts';
import { SchemaVersionError, type Sluice } from '../../src/index.ts';
import { copyTemplateDatabase } from '../helpers/templateDatabase.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

const db = useTestDatabase('schema', { migrateFromScratch: true });

/**
 * SHOW CREATE TABLE for every table of one install, in name order, normalised: the
 * AUTO_INCREMENT counter is data, not schema, and the prefix is replaced by `<prefix>`.
 */
async function schemaDump(prefix: string, schema = db.name): Promise<string> {
  const tables = await db.query<{ name: string }>(
    'SELECT table_name AS name FROM information_schema.tables WHERE table_schema = ? AND table_name LIKE ? ORDER BY table_name',
    [schema, `${prefix.replace(/_/g, '\\_')}%`],
  );
  const parts: string[] = [];
  for (const { name } of tables) {
    const [row] = await db.query<Record<string, string>>(`SHOW CREATE TABLE \`${schema}\`.\`${name}\``);
    const ddl = (row?.['Create Table'] ?? '')
      .replace(/ AUTO_INCREMENT=\d+/, '')
      .split(prefix)
      .join('<prefix>');
    parts.push(`-- ${name.replace(prefix, '<prefix>')}\n${ddl};\n`);
  }
  return parts.join('\n');
}

async function appliedMigrations(prefix: string, schema = db.name): Promise<string[]> {
  return (await db.query<{ name: string }>(`SELECT name FROM \`${schema}\`.\`${prefix}migrations\` ORDER BY id`)).map(
    (r) => r.name,
  );
}

async function expectSchemaError(sluice: Sluice, text: string): Promise<void> {
  const error = await assertSchemaCurrent(fromKnex(sluice.knex), sluice.tables).then(
    () => new Error('assertSchemaCurrent accepted the schema'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SchemaVersionError);
  expect(error).toMatchObject({ code: 'SLUICE_SCHEMA_VERSION' });
  expect((error as Error).message).toContain(text);
}

describe('schema', () => {
  it('matches the committed schema snapshot (SHOW CREATE TABLE of every table)', async () => {
    const { flavor } = await db.sluice.serverInfo();
    const dump = await schemaDump('sluice_');
    expect(dump).toContain('-- <prefix>jobs\n');
    // One snapshot per server family: MySQL and MariaDB print the same DDL differently.
    await expect(dump).toMatchFileSnapshot(`./__snapshots__/schema.${flavor}.sql`);
  });

  it('applied every migration this build knows, in order', async () => {
    expect(await appliedMigrations('sluice_')).toEqual(await knownMigrations());
    await expect(assertSchemaCurrent(fromKnex(db.sluice.knex), db.sluice.tables)).resolves.toBeUndefined();
  });

  it("a copy of the suite's template database is the schema the migrations build", async () => {
    // Every other test file works in such a copy (test/helpers/templateDatabase.ts).
    const copy = `${db.name}_copy`;
    const admin = await mysql.createConnection({ uri: inject('mysqlUrl') });
    try {
      await copyTemplateDatabase(admin, inject('templateDatabase'), copy);
      expect(await schemaDump('sluice_', copy)).toBe(await schemaDump('sluice_'));
      expect(await appliedMigrations('sluice_', copy)).toEqual(await knownMigrations());
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS \`${copy}\``);
      await admin.end();
    }
  });

  it('migrate() on a migrated database is a no-op', async () => {
    const before = await schemaDump('sluice_');
    const applied = await appliedMigrations('sluice_');
    expect(await db.sluice.migrate()).toEqual({ applied: [] });
    expect(await db.sluice.migrate()).toEqual({ applied: [] });
    expect(await schemaDump('sluice_')).toBe(before);
    expect(await appliedMigrations('sluice_')).toEqual(applied);
  });

  it('migrates a second install under another prefix to the same schema, once', async () => {
    const other = db.open({ tablePrefix: 'twice_' });
    await expectSchemaError(other, 'no sluice schema with prefix "twice_"');
    expect(await other.migrate()).toEqual({ applied: await knownMigrations() });
    expect(await other.migrate()).toEqual({ applied: [] });
    expect(await schemaDump('twice_')).toBe(await schemaDump('sluice_'));
    await expect(assertSchemaCurrent(fromKnex(other.knex), other.tables)).resolves.toBeUndefined();
  });

  it('refuses a database that carries a migration this build does not know', async () => {
    const future = '209912312359_add_something_new';
    await db.query('INSERT INTO sluice_migrations (name, batch, migration_time) VALUES (?, 99, NOW())', [future]);
    try {
      await expectSchemaError(db.sluice, future);
      await expectSchemaError(db.sluice, 'upgrade sluice');
      const worker = db.sluice.worker({ jobs: [] });
      await expect(worker.start()).rejects.toBeInstanceOf(SchemaVersionError);
      expect(worker.state).toBe('new');
      const maintainer = db.sluice.maintenance();
      await expect(maintainer.start()).rejects.toBeInstanceOf(SchemaVersionError);
      await maintainer.stop();
    } finally {
      await db.query('DELETE FROM sluice_migrations WHERE name = ?', [future]);
    }
  });

  it('refuses a database with migrations still pending', async () => {
    const other = db.open({ tablePrefix: 'behind_' });
    await other.migrate();
    const [last] = (await appliedMigrations('behind_')).slice(-1);
    await db.query('DELETE FROM behind_migrations WHERE name = ?', [last]);
    await expectSchemaError(other, `pending migrations (${last})`);
    await expect(other.worker({ jobs: [] }).start()).rejects.toBeInstanceOf(SchemaVersionError);
  });
});
