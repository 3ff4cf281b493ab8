import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findServerBinary, type ServerBinary } from '../../src/demo/server/findServerBinary.ts';
import { freeLoopbackPort } from '../../src/demo/server/freeLoopbackPort.ts';
import {
  initialiseCommandLine,
  type ServerLayout,
  serverCommandLine,
  serverLayout,
} from '../../src/demo/server/serverCommandLine.ts';
import { exitOf, hasExited, signalGroup, spawnTiedToParent } from '../../src/demo/server/spawnTiedToParent.ts';
import { waitForServerLogin } from '../../src/demo/server/waitForServerLogin.ts';

/**
 * A private server for tests that restart it: built from the throwaway server's parts
 * (src/demo/server/), whose `stop()` removes the data directory, so it cannot come back. This one
 * keeps its data directory and port across `restart()`, as a production server does: same
 * `@@hostname:@@port`, same data, connection ids counting from the start again. Root logs in over
 * TCP with an empty password; other users have real grants. Killed (and its folder removed) when
 * the test process exits.
 */
export interface RestartableServer {
  /** `mysql://root@127.0.0.1:<port>/` (no database). */
  readonly rootUrl: string;
  readonly port: number;
  /** SIGTERM (a clean shutdown), then the same command line again; resolves once root can log in. */
  restart(options?: { whileDown?: () => Promise<void> | void }): Promise<void>;
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 60_000;

export async function startRestartableServer(): Promise<RestartableServer> {
  const binary = findServerBinary();
  if (!binary) throw new Error('no mariadbd/mysqld on this machine for a private server');
  const layout = serverLayout(mkdtempSync(join(tmpdir(), 'sluice-rs-')));
  const onExit = () => {
    if (child && !hasExited(child)) signalGroup(child, 'SIGKILL');
    rmSync(layout.home, { recursive: true, force: true });
  };
  process.on('exit', onExit);
  let child: ChildProcess | undefined = await initialise(binary, layout);
  const port = await freeLoopbackPort();
  const start = async () => {
    const line = serverCommandLine(binary, layout, port, []);
    child = spawnTiedToParent(line.command, line.args, layout.outputLog);
    const login = await waitForServerLogin(child, port, Date.now() + START_TIMEOUT_MS);
    if ('failure' in login) throw new Error(`private server: ${login.failure} (logs in ${layout.home})`);
  };
  const shutDown = async () => {
    if (!child || hasExited(child)) return;
    signalGroup(child, 'SIGTERM');
    await exitOf(child);
  };
  await start();
  return {
    rootUrl: `mysql://root@127.0.0.1:${port}/`,
    port,
    async restart(options = {}) {
      await shutDown();
      await options.whileDown?.();
      await start();
    },
    async stop() {
      await shutDown();
      process.off('exit', onExit);
      rmSync(layout.home, { recursive: true, force: true });
    },
  };
}

async function initialise(binary: ServerBinary, layout: ServerLayout): Promise<ChildProcess> {
  const line = initialiseCommandLine(binary, layout);
  if (!line) throw new Error(`found ${binary.path} but no mariadb-install-db to initialise a data directory`);
  const child = spawnTiedToParent(line.command, line.args, layout.outputLog);
  await exitOf(child);
  if (child.exitCode !== 0) throw new Error(`initialising ${layout.dataDir} failed (logs in ${layout.home})`);
  return child;
}
