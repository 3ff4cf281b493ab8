import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { redactUrl } from '../../db/redactUrl.ts';
import { ConnectionError } from '../../errors.ts';
import { ServerStartError } from './ServerStartError.ts';
import { startThrowawayServer } from './throwawayServer.ts';

/** A server to run against: the one at the URL, or one started for this run. */
export interface ServerInUse {
  readonly url: string;
  /** What was started because nothing answered at the URL (for messages); null when the URL answered. */
  readonly started: string | null;
  /** Stops and removes what was started; nothing for a server that was already there. Idempotent. */
  stop(): Promise<void>;
}

/** Connection failures that mean "no server there", as opposed to a server that refuses us. */
const NOTHING_ANSWERS = new Set(['ECONNREFUSED', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL']);
const PROBE_TIMEOUT_MS = 3_000;

/**
 * For `sluice demo` and the test suite: the server at `url` if one answers there; when nothing
 * does (connection refused, timed out, unreachable), MySQL 8 in a container through
 * testcontainers where a container runtime and @testcontainers/mysql exist, else a private
 * mariadbd/mysqld from this machine's binaries (throwawayServer.ts) in a temporary folder on a
 * free loopback port. A server that answers but refuses us (bad password, no such database)
 * is an error, never a reason to start another. When nothing can be started either, one
 * ConnectionError says how to point sluice at a server.
 */
export async function serverOrThrowaway(url: string, onProgress: (line: string) => void): Promise<ServerInUse> {
  const code = await probe(url);
  if (code === null) return { url, started: null, stop: async () => {} };
  onProgress(`nothing answers at ${redactUrl(url)} (${code}): starting a throwaway server`);
  const container = await startContainer(onProgress);
  if (container) return container;
  try {
    const server = await startThrowawayServer({ onProgress: (line) => onProgress(`  ${line}`) });
    return {
      url: server.url,
      started: `a throwaway ${server.flavor === 'mariadb' ? 'MariaDB' : 'MySQL'} server (pid ${server.pid}, data in ${server.dataDir})`,
      stop: () => server.stop(),
    };
  } catch (error) {
    // The one line below cannot hold the server's own words; say them first, so a failure (in CI,
    // say) can be read without running it again.
    if (error instanceof ServerStartError && error.logTail) {
      onProgress("  the throwaway server's log, last lines:");
      for (const line of error.logTail.split('\n')) onProgress(`    ${line}`);
    }
    throw new ConnectionError(
      `nothing answers at ${redactUrl(url)} (${code}) and no throwaway server could be started ` +
        `(${(error as Error).message.split('\n')[0]}). Point sluice at a MySQL 8.0+ or MariaDB 10.6+ server: ` +
        'MYSQL_URL=mysql://user:password@host:port/database',
      { cause: error },
    );
  }
}

/** null when a server answers and lets us in; the error code when nothing answers; throws when a server refuses us. */
async function probe(url: string): Promise<string | null> {
  let connection: mysql.Connection | undefined;
  try {
    connection = await mysql.createConnection({
      uri: url.replace(/^mariadb:/, 'mysql:'),
      connectTimeout: PROBE_TIMEOUT_MS,
    });
    await connection.query('SELECT 1');
    return null;
  } catch (error) {
    const code = (error as { code?: string }).code ?? '';
    if (NOTHING_ANSWERS.has(code)) return code;
    throw new ConnectionError(
      `cannot use the server at ${redactUrl(url)}: ${(error as Error).message}. ` +
        'Set MYSQL_URL=mysql://user:password@host:port/database to point sluice at a MySQL 8.0+ or MariaDB 10.6+ server.',
      { cause: error },
    );
  } finally {
    await connection?.end().catch(() => undefined);
  }
}

/** MySQL 8 through testcontainers, or null where there is no container runtime or no @testcontainers/mysql. */
async function startContainer(onProgress: (line: string) => void): Promise<ServerInUse | null> {
  if (!hasContainerRuntime()) {
    onProgress('  no container runtime (Docker socket or DOCKER_HOST) for MySQL 8 through testcontainers');
    return null;
  }
  const containers = loadTestcontainers();
  if (!containers) {
    onProgress(
      '  a container runtime exists, but @testcontainers/mysql is not installed (npm i -D @testcontainers/mysql)',
    );
    return null;
  }
  onProgress('  starting MySQL 8.0 in a container (testcontainers)');
  const container = await new containers.MySqlContainer('mysql:8.0').withRootPassword('sluice').start();
  let stopping: Promise<void> | undefined;
  return {
    url: `mysql://root:sluice@${container.getHost()}:${container.getPort()}/test`,
    started: `MySQL 8.0 in a container (testcontainers, ${container.getId().slice(0, 12)})`,
    stop() {
      stopping ??= container.stop().then(() => undefined);
      return stopping;
    },
  };
}

/**
 * @testcontainers/mysql as the app has it (resolved from the working folder, where `npx sluice demo`
 * runs), else as installed beside sluice (the repo's devDependency); null where neither has it. It
 * is no dependency of the package, not even a peer: only this fallback uses it, when present.
 */
function loadTestcontainers(): typeof import('@testcontainers/mysql') | null {
  for (const from of [join(process.cwd(), 'package.json'), import.meta.url]) {
    try {
      return createRequire(from)('@testcontainers/mysql') as typeof import('@testcontainers/mysql');
    } catch {
      // not installed there
    }
  }
  return null;
}

export function hasContainerRuntime(): boolean {
  return (
    Boolean(process.env.DOCKER_HOST) ||
    existsSync('/var/run/docker.sock') ||
    existsSync(join(homedir(), '.docker', 'run', 'docker.sock'))
  );
}
