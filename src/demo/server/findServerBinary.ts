import { execFileSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

export type ServerFlavor = 'mariadb' | 'mysql';

/** An installed server binary, and how its data directory is initialised. */
export interface ServerBinary {
  /** Absolute path of `mariadbd` or `mysqld`. */
  readonly path: string;
  readonly flavor: ServerFlavor;
  /** First line of `--version`, for progress lines and errors. */
  readonly version: string;
  /**
   * MariaDB: path of `mariadb-install-db` / `mysql_install_db`, or null when none is installed.
   * MySQL: always null, since the server initialises its own data directory (`--initialize-insecure`).
   */
  readonly installDb: string | null;
}

/** Where distributions and the MySQL tarball put the server, after PATH (sbin is often not on a user's PATH). */
const EXTRA_DIRS = ['/usr/sbin', '/usr/local/sbin', '/usr/local/mysql/bin', '/usr/bin', '/usr/local/bin'];
const INSTALL_DB_EXTRA_DIRS = ['/usr/local/mysql/scripts'];

/**
 * Finds a MySQL-compatible server on this machine: `mariadbd` first, then `mysqld` (which on a
 * MariaDB install is a link to mariadbd, so the flavor comes from `--version`, not the name).
 * Returns null when none is installed or none runs.
 */
export function findServerBinary(): ServerBinary | null {
  for (const name of ['mariadbd', 'mysqld']) {
    const path = findExecutable(name);
    if (!path) continue;
    const version = versionOf(path);
    if (version === null) continue;
    const flavor: ServerFlavor = /mariadb/i.test(version) ? 'mariadb' : 'mysql';
    const installDb =
      flavor === 'mariadb'
        ? (findExecutable('mariadb-install-db', INSTALL_DB_EXTRA_DIRS) ??
          findExecutable('mysql_install_db', INSTALL_DB_EXTRA_DIRS))
        : null;
    return { path, flavor, version, installDb };
  }
  return null;
}

/** First executable file called `name` on PATH, then in the usual server directories. */
function findExecutable(name: string, moreDirs: readonly string[] = []): string | null {
  const onPath = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  for (const dir of [...onPath, ...EXTRA_DIRS, ...moreDirs]) {
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

function versionOf(path: string): string | null {
  try {
    const out = execFileSync(path, ['--no-defaults', '--version'], {
      encoding: 'utf8',
      timeout: 10_000,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return out.split('\n')[0]?.trim() || null;
  } catch {
    return null;
  }
}
