import { existsSync } from 'node:fs';
import mysql from 'mysql2/promise';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A server URL whose user may CREATE/DROP DATABASE; each test file makes its own database. */
    mysqlUrl: string;
  }
}

const LOCAL_DEFAULT = 'mysql://root@127.0.0.1:3306/test';

/**
 * Finds the server the suite runs against, in this order:
 * 1. MYSQL_URL, if set (it must answer);
 * 2. MySQL 8 in a container via testcontainers, where a container runtime exists;
 * 3. the local default server, if one answers;
 * otherwise fails, saying how to point the suite at a server. Never skips.
 */
export default async function setup(project: TestProject): Promise<(() => Promise<void>) | void> {
  if (process.env.MYSQL_URL) {
    await assertAnswers(process.env.MYSQL_URL, 'MYSQL_URL');
    project.provide('mysqlUrl', process.env.MYSQL_URL);
    return;
  }
  if (hasContainerRuntime()) {
    const { MySqlContainer } = await import('@testcontainers/mysql');
    const container = await new MySqlContainer('mysql:8.0').withRootPassword('sluice').start();
    const url = `mysql://root:sluice@${container.getHost()}:${container.getPort()}/test`;
    await assertAnswers(url, 'the MySQL 8 container');
    project.provide('mysqlUrl', url);
    return async () => {
      await container.stop();
    };
  }
  if (await answers(LOCAL_DEFAULT)) {
    project.provide('mysqlUrl', LOCAL_DEFAULT);
    return;
  }
  throw new Error(
    'sluice tests need a MySQL 8.0+ or MariaDB 10.6+ server and found none: MYSQL_URL is unset, no container ' +
      `runtime is available for testcontainers, and nothing answers at ${LOCAL_DEFAULT}. ` +
      'Set MYSQL_URL=mysql://user:password@host:port/database (the user needs CREATE/DROP DATABASE), ' +
      'or start a local server (bash .ci/run installs and starts MariaDB on Debian).',
  );
}

function hasContainerRuntime(): boolean {
  return Boolean(process.env.DOCKER_HOST) || existsSync('/var/run/docker.sock') || existsSync(`${process.env.HOME}/.docker/run/docker.sock`);
}

async function answers(url: string): Promise<boolean> {
  try {
    const connection = await mysql.createConnection({ uri: url, connectTimeout: 3_000 });
    await connection.query('SELECT 1');
    await connection.end();
    return true;
  } catch {
    return false;
  }
}

async function assertAnswers(url: string, what: string): Promise<void> {
  try {
    const connection = await mysql.createConnection({ uri: url, connectTimeout: 10_000 });
    await connection.query('SELECT 1');
    await connection.end();
  } catch (error) {
    const safe = new URL(url);
    if (safe.password) safe.password = '***';
    throw new Error(`${what} (${safe.toString()}) does not answer: ${(error as Error).message}`);
  }
}
