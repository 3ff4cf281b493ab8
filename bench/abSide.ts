/**
 * One side of a before/after bench: a checkout of sluice (this one, or another one made with
 * `git archive <commit> | tar -x -C DIR` plus a node_modules link) and its own table prefix,
 * migrated by that checkout's own `sluice migrate` (a newer schema would be refused by older code).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { type Connection, createConnection } from 'mysql2/promise';

export interface Side {
  readonly label: string;
  readonly root: string;
  readonly prefix: string;
}

export const HERE = resolve(import.meta.dirname, '..');

/**
 * node arguments that run `sluice <command>` from a checkout's sources. The URL goes to the child
 * as MYSQL_URL (sideEnv), never in argv: `ps` shows argv, and the URL may hold a password.
 */
export function sideCli(side: Side, command: string): string[] {
  return [
    '--import',
    'tsx',
    '--conditions=sluice-source',
    join(side.root, 'src/cli/sluice.ts'),
    command,
    '--prefix',
    side.prefix,
  ];
}

/** The sides to compare: `base` (when given) first, then this checkout. */
export function sidesOf(base: string | undefined, tag: string): Side[] {
  const here = { label: 'after (this checkout)', root: HERE, prefix: `${tag}_b_` };
  return base ? [{ label: `before (${base})`, root: resolve(base), prefix: `${tag}_a_` }, here] : [here];
}

export function migrateSide(side: Side, url: string): void {
  execFileSync(process.execPath, sideCli(side, 'migrate'), {
    env: { ...process.env, MYSQL_URL: url },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** A throwaway database URL on MYSQL_URL's server (or the local default). */
export function databaseUrl(database: string): string {
  const url = new URL(process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test');
  url.pathname = `/${database}`;
  return url.toString();
}

/**
 * Runs `body` with a throwaway database on MYSQL_URL's server (or the local default), named from
 * `tag` and a random suffix, created utf8mb4_bin as sluice's and dropped afterwards whatever happens.
 * `admin` is a connection without a default database, for statements across databases.
 */
export async function withScratchDatabase<T>(
  tag: string,
  body: (url: string, database: string, admin: Connection) => Promise<T>,
): Promise<T> {
  const database = `sluice_${tag}_${randomBytes(3).toString('hex')}`;
  const admin = await createConnection({ uri: databaseUrl('') });
  try {
    await admin.query(`CREATE DATABASE \`${database}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
    return await body(databaseUrl(database), database, admin);
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
    await admin.end();
  }
}
