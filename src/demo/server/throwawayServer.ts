import type { ChildProcess } from 'node:child_process';
import { readFileSync, renameSync, rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { findServerBinary, type ServerBinary, type ServerFlavor } from './findServerBinary.ts';
import { freeLoopbackPort } from './freeLoopbackPort.ts';
import { ServerStartError } from './ServerStartError.ts';
import {
  initialiseCommandLine,
  MAX_SOCKET_PATH_BYTES,
  type ServerLayout,
  serverCommandLine,
  serverLayout,
} from './serverCommandLine.ts';
import { exitOf, hasExited, signalGroup, spawnTiedToParent } from './spawnTiedToParent.ts';
import { waitForServerLogin } from './waitForServerLogin.ts';

export type { ServerFlavor } from './findServerBinary.ts';

/** Params: none. Creates the database the returned URL names (no install makes it: --skip-test-db). */
const SQL_CREATE_TEST_DATABASE = 'CREATE DATABASE IF NOT EXISTS test';

/**
 * A private MySQL/MariaDB server started from this machine's binaries, for `sluice demo` and the
 * tests, in a temporary folder that `stop()` removes. Root has no password; nothing else can reach
 * it (loopback only).
 */
export interface ThrowawayServer {
  /** `mysql://root@127.0.0.1:<port>/test` */
  readonly url: string;
  readonly port: number;
  readonly flavor: ServerFlavor;
  /** The server's process id (its own process group). */
  readonly pid: number;
  /** The temporary folder holding the data directory, socket and logs; gone after `stop()`. */
  readonly dataDir: string;
  /** SIGTERM, then SIGKILL after `stopTimeoutMs`; removes `dataDir`. Idempotent: every call returns the same promise. */
  stop(): Promise<void>;
}

export interface ThrowawayServerOptions {
  /** Server arguments after sluice's own (they win): `--sql-mode=NO_BACKSLASH_ESCAPES`, `--ssl-cert=…`. */
  extraArgs?: readonly string[];
  /** Receives one line per step (found, initialising, starting, ready). */
  onProgress?: (line: string) => void;
  /** Deadline for the whole start: initialisation, start, first answer. @defaultValue 30_000 */
  startTimeoutMs?: number;
  /** How long `stop()` waits after SIGTERM before SIGKILL. @defaultValue 10_000 */
  stopTimeoutMs?: number;
}

const DEFAULT_START_TIMEOUT_MS = 30_000;
const DEFAULT_STOP_TIMEOUT_MS = 10_000;
/** Tries with a fresh port when another process took the free one before the server bound it. */
const PORT_ATTEMPTS = 3;
const LOG_TAIL_LINES = 25;

/**
 * Starts a throwaway server: finds `mariadbd`/`mysqld`, initialises a data directory under
 * os.tmpdir(), starts the server on a free loopback port and waits until root can log in over TCP.
 * On any failure it throws ServerStartError (with the tail of the server's log) and leaves no
 * process or folder behind. The server dies with this process: an `exit` hook SIGKILLs it, and on
 * Linux the kernel does if we are killed outright.
 */
export async function startThrowawayServer(options: ThrowawayServerOptions = {}): Promise<ThrowawayServer> {
  const startedAt = Date.now();
  const deadline = startedAt + (options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS);
  const progress = options.onProgress ?? (() => {});
  const binary = findServerBinary();
  if (!binary)
    throw new ServerStartError(
      'no MySQL or MariaDB server is installed: found neither mariadbd nor mysqld on PATH or in /usr/sbin, ' +
        '/usr/local/sbin, /usr/local/mysql/bin (on Debian: apt-get install mariadb-server), or give a server URL',
      '',
    );
  progress(`found ${binary.version}`);
  const layout = serverLayout(await mkdtemp(join(tmpdir(), 'sluice-db-')));
  let child: ChildProcess | undefined;
  // Synchronous on purpose: 'exit' listeners cannot wait. Best effort: it must not throw.
  const onExit = () => {
    if (child && !hasExited(child)) signalGroup(child, 'SIGKILL');
    try {
      rmSync(layout.home, { recursive: true, force: true, maxRetries: 3 });
    } catch {
      // a dying server may still hold the folder; it is under os.tmpdir()
    }
  };
  process.on('exit', onExit);
  const fail = async (error: unknown): Promise<never> => {
    if (child) await kill(child, 0);
    process.off('exit', onExit);
    const logTail = readLogTail(layout);
    // Cleanup must not hide why the start failed.
    await rm(layout.home, { recursive: true, force: true, maxRetries: 5 }).catch(() => {});
    if (error instanceof ServerStartError) throw error;
    throw new ServerStartError(`throwaway server failed: ${(error as Error).message}`, logTail, { cause: error });
  };
  try {
    if (Buffer.byteLength(layout.socket) > MAX_SOCKET_PATH_BYTES)
      throw new ServerStartError(`socket path ${layout.socket} is too long; set TMPDIR to a shorter folder`, '');
    child = await initialise(binary, layout, deadline, progress);
    let port = 0;
    let login: mysql.ConnectionOptions;
    for (let attempt = 1; ; attempt++) {
      port = await freeLoopbackPort();
      const line = serverCommandLine(binary, layout, port, options.extraArgs ?? []);
      progress(`starting ${binary.flavor} on 127.0.0.1:${port} (data in ${layout.home})`);
      child = spawnTiedToParent(line.command, line.args, layout.outputLog);
      const probe = await waitForServerLogin(child, port, deadline);
      if ('ready' in probe) {
        login = probe.ready;
        break;
      }
      const portTaken = /address already in use|errno: 98|error: 98/i.test(readLogTail(layout));
      if (portTaken && attempt < PORT_ATTEMPTS) {
        progress(`port ${port} was taken meanwhile; trying another`);
        // Keep the log for a later error message, but out of the way of the next attempt's check.
        renameSync(layout.errorLog, `${layout.errorLog}.${attempt}`);
        continue;
      }
      throw new ServerStartError(probe.failure, readLogTail(layout));
    }
    await createTestDatabase(login);
    const url = `mysql://root@127.0.0.1:${port}/test`;
    progress(`ready at ${url} after ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
    return runningServer(
      binary.flavor,
      port,
      url,
      child,
      layout,
      onExit,
      options.stopTimeoutMs ?? DEFAULT_STOP_TIMEOUT_MS,
    );
  } catch (error) {
    return fail(error);
  }
}

function runningServer(
  flavor: ServerFlavor,
  port: number,
  url: string,
  child: ChildProcess,
  layout: ServerLayout,
  onExit: () => void,
  stopTimeoutMs: number,
): ThrowawayServer {
  let stopping: Promise<void> | undefined;
  return {
    url,
    port,
    flavor,
    pid: child.pid!,
    dataDir: layout.home,
    stop() {
      stopping ??= (async () => {
        await kill(child, stopTimeoutMs);
        await rm(layout.home, { recursive: true, force: true, maxRetries: 3 });
        process.off('exit', onExit);
      })();
      return stopping;
    },
  };
}

/** Creates the system tables (mariadb-install-db, or mysqld --initialize-insecure); returns that finished process. */
async function initialise(
  binary: ServerBinary,
  layout: ServerLayout,
  deadline: number,
  progress: (line: string) => void,
): Promise<ChildProcess> {
  const line = initialiseCommandLine(binary, layout);
  if (!line)
    throw new ServerStartError(
      `found ${binary.path} but neither mariadb-install-db nor mysql_install_db to initialise its data directory`,
      '',
    );
  progress(`initialising data directory (${line.command.split('/').pop()})`);
  const child = spawnTiedToParent(line.command, line.args, layout.outputLog);
  const timer = setTimeout(() => signalGroup(child, 'SIGKILL'), Math.max(0, deadline - Date.now()));
  await exitOf(child);
  clearTimeout(timer);
  if (child.exitCode !== 0)
    throw new ServerStartError(
      child.signalCode === 'SIGKILL'
        ? 'initialising the data directory did not finish before the start deadline'
        : `initialising the data directory failed (${line.command} exited with ${child.exitCode ?? child.signalCode})`,
      readLogTail(layout),
    );
  return child;
}

async function createTestDatabase(options: mysql.ConnectionOptions): Promise<void> {
  const connection = await mysql.createConnection(options);
  try {
    await connection.query(SQL_CREATE_TEST_DATABASE);
  } finally {
    await connection.end();
  }
}

/** SIGTERM (a clean shutdown), SIGKILL if it has not exited after `graceMs` (0: at once). */
async function kill(child: ChildProcess, graceMs: number): Promise<void> {
  if (hasExited(child)) return;
  if (graceMs > 0) {
    signalGroup(child, 'SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      exitOf(child).then(() => false),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), graceMs);
      }),
    ]);
    clearTimeout(timer);
    if (!timedOut) return;
  }
  signalGroup(child, 'SIGKILL');
  await exitOf(child);
}

/** The last lines of the server's error log and of its stdout/stderr, for error messages. */
function readLogTail(layout: ServerLayout): string {
  const tails: string[] = [];
  for (const path of [layout.errorLog, layout.outputLog]) {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch {
      continue;
    }
    const lines = text.trimEnd().split('\n').filter(Boolean);
    if (lines.length) tails.push(lines.slice(-LOG_TAIL_LINES).join('\n'));
  }
  return tails.join('\n');
}
