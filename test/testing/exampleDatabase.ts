import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import { afterAll, inject } from 'vitest';

/**
 * Imported first by each example of docs/testing.md (and not quoted there): points MYSQL_URL at a
 * database of this file's own, as an application's test setup would point it at its test
 * database, and drops it after the file.
 */
const server = inject('mysqlUrl');
const name = `sluice_t_example_${randomBytes(3).toString('hex')}`;
const admin = await mysql.createConnection({ uri: server });
await admin.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4`);
const url = new URL(server);
url.pathname = `/${name}`;
process.env.MYSQL_URL = url.toString();

afterAll(async () => {
  await admin.query(`DROP DATABASE IF EXISTS \`${name}\``);
  await admin.end();
});
