import { join } from 'node:path';
import type { ServerBinary } from './findServerBinary.ts';

/** Where a throwaway server keeps everything: one temporary folder, removed whole on stop. */
export interface ServerLayout {
  readonly home: string;
  /** The server's data directory. MySQL's `--initialize-insecure` wants it absent, so it is a subfolder. */
  readonly dataDir: string;
  readonly socket: string;
  readonly pidFile: string;
  /** The server's `--log-error`: where it says why it stopped. */
  readonly errorLog: string;
  /** stdout/stderr of the server and of the initialisation step. */
  readonly outputLog: string;
}

/** Unix socket paths are limited to 108 bytes (sun_path), the terminating NUL included. */
export const MAX_SOCKET_PATH_BYTES = 107;

export function serverLayout(home: string): ServerLayout {
  return {
    home,
    dataDir: join(home, 'data'),
    socket: join(home, 'mysqld.sock'),
    pidFile: join(home, 'mysqld.pid'),
    errorLog: join(home, 'error.log'),
    outputLog: join(home, 'output.log'),
  };
}

/**
 * Small enough for a laptop or CI box to run several at once: a 32 MB buffer pool instead of
 * 128 MB, an 8 MB redo log instead of 96 MB (also what makes initialisation quick), no
 * performance_schema (its tables cost ~100 MB).
 */
const SIZING = ['--innodb-buffer-pool-size=32M', '--innodb-log-file-size=8M', '--performance-schema=OFF'];

/** A server refuses to run as root unless told to; as root we let it (nothing is shared with the system server). */
function userArgs(): string[] {
  return process.getuid?.() === 0 ? ['--user=root'] : [];
}

/**
 * The command that creates the system tables in `layout.dataDir`, with a root account that logs in
 * over TCP with an empty password (`root@127.0.0.1` / `root@localhost`). `--no-defaults` comes
 * first, as the server requires, so no /etc/mysql file changes what we start.
 */
export function initialiseCommandLine(
  binary: ServerBinary,
  layout: ServerLayout,
): { command: string; args: string[] } | null {
  if (binary.flavor === 'mysql') {
    return {
      command: binary.path,
      args: [
        '--no-defaults',
        '--initialize-insecure',
        `--datadir=${layout.dataDir}`,
        `--log-error=${layout.errorLog}`,
        ...userArgs(),
        ...SIZING,
      ],
    };
  }
  if (!binary.installDb) return null;
  return {
    command: binary.installDb,
    args: [
      '--no-defaults',
      `--datadir=${layout.dataDir}`,
      '--auth-root-authentication-method=normal',
      '--skip-test-db',
      '--skip-name-resolve',
      ...userArgs(),
      ...SIZING,
    ],
  };
}

/**
 * The server's own command line: loopback TCP on `port` only, socket/pid/log inside the layout (so
 * it never touches the system server's /run/mysqld), then `extraArgs`, which come last and so win
 * over ours (`--sql-mode=…`, `--ssl-cert=…`).
 */
export function serverCommandLine(
  binary: ServerBinary,
  layout: ServerLayout,
  port: number,
  extraArgs: readonly string[],
): { command: string; args: string[] } {
  const flavorArgs =
    binary.flavor === 'mysql'
      ? // MySQL 8 opens the X protocol on 33060 (would clash between two servers) and the binary
        // log by default; its packages compile in a secure_file_priv folder that may not exist.
        ['--loose-mysqlx=OFF', '--skip-log-bin', `--secure-file-priv=${layout.home}`]
      : // install-db made root@127.0.0.1, so no reverse lookup of the client address is needed.
        ['--skip-name-resolve'];
  return {
    command: binary.path,
    args: [
      '--no-defaults',
      `--datadir=${layout.dataDir}`,
      `--port=${port}`,
      '--bind-address=127.0.0.1',
      '--skip-networking=0',
      `--socket=${layout.socket}`,
      `--pid-file=${layout.pidFile}`,
      `--log-error=${layout.errorLog}`,
      '--character-set-server=utf8mb4',
      ...userArgs(),
      ...SIZING,
      ...flavorArgs,
      ...extraArgs,
    ],
  };
}
