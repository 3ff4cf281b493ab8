import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import { pino } from 'pino';
import { createSluice } from '../../src/index.ts';

/**
 * The suite's template: one database migrated once per run (in globalSetup), which each test
 * file copies instead of running every migration again. MySQL has no CREATE DATABASE … TEMPLATE;
 * CREATE TABLE … LIKE copies a table's columns, indexes and options, and the rows are copied
 * after it (the migrations table above all, so the copy counts as migrated). The schema test
 * migrates from scratch and holds the copy to the same SHOW CREATE TABLE as the migrations.
 */
export interface TemplateDatabase {
  readonly name: string;
  drop(): Promise<void>;
}

export async function createTemplateDatabase(serverUrl: string): Promise<TemplateDatabase> {
  const name = `sluice_template_${randomBytes(3).toString('hex')}`;
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const admin = await mysql.createConnection({ uri: serverUrl, connectTimeout: 20_000 });
  await admin.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4`);
  const sluice = createSluice({ url: url.toString(), logger: pino({ level: 'silent' }) });
  try {
    await sluice.migrate();
  } finally {
    await sluice.close();
  }
  return {
    name,
    async drop() {
      await admin.query(`DROP DATABASE IF EXISTS \`${name}\``);
      await admin.end();
    },
  };
}

/** Creates database `name` as a copy of `template`: every table's definition, then its rows. */
export async function copyTemplateDatabase(admin: mysql.Connection, template: string, name: string): Promise<void> {
  await admin.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4`);
  const [tables] = (await admin.query(
    'SELECT table_name AS t FROM information_schema.tables WHERE table_schema = ? ORDER BY table_name',
    [template],
  )) as unknown as [{ t: string }[]];
  for (const { t } of tables) {
    await admin.query(`CREATE TABLE \`${name}\`.\`${t}\` LIKE \`${template}\`.\`${t}\``);
    await admin.query(`INSERT INTO \`${name}\`.\`${t}\` SELECT * FROM \`${template}\`.\`${t}\``);
  }
}
