import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, closeSync, constants, openSync } from 'node:fs';

/** util-linux's setpriv (Debian/Ubuntu/Fedora base systems) sets the parent-death signal, then execs. */
const SETPRIV_PATHS = ['/usr/bin/setpriv', '/bin/setpriv'];

/**
 * Spawns a helper process (a throwaway database server) that must not outlive this one:
 * - in its own process group, so a Ctrl-C at the terminal reaches only us and the app decides when
 *   and how the helper stops (a server shut down by the same SIGINT would fail the app's drain);
 * - with stdout and stderr appended to `logPath`, so no pipe needs reading and none holds the
 *   event loop open (the child is unref'd too: the caller's exit hook kills it instead);
 * - on Linux, through `setpriv --pdeathsig KILL`, so the kernel SIGKILLs it when we die without
 *   running exit hooks (SIGKILL, crash). The signal follows the spawning thread: spawn from the
 *   main thread. The pid is the helper's own (setpriv execs it).
 */
export function spawnTiedToParent(command: string, args: readonly string[], logPath: string): ChildProcess {
  const out = openSync(logPath, 'a');
  try {
    const setpriv = process.platform === 'linux' ? SETPRIV_PATHS.find(isExecutable) : undefined;
    const [file, argv] = setpriv ? [setpriv, ['--pdeathsig', 'KILL', '--', command, ...args]] : [command, [...args]];
    const child = spawn(file, argv, { detached: true, stdio: ['ignore', out, out] });
    // A failed spawn (binary vanished since it was found) shows as `hasExited` with no pid; this
    // listener keeps its 'error' event from crashing the process.
    child.on('error', () => {});
    child.unref();
    return child;
  } finally {
    closeSync(out);
  }
}

/**
 * Resolves once the child has exited (at once if it already has, or never started). The child is
 * unref'd, so a timer holds the event loop open meanwhile: awaiting this must not end the process.
 */
export function exitOf(child: ChildProcess): Promise<void> {
  if (hasExited(child)) return Promise.resolve();
  const keepAlive = setInterval(() => {}, 60_000);
  return new Promise((resolve) => {
    const done = () => {
      clearInterval(keepAlive);
      resolve();
    };
    child.once('exit', done);
    child.once('error', done);
  });
}

/**
 * Signals the child's whole process group (it leads one), so that what it started stops too:
 * mariadb-install-db is a script that runs `mariadbd --bootstrap`, which would otherwise outlive it.
 */
export function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    child.kill(signal); // no such group (already gone): the child alone, if still there
  }
}

export function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null || child.pid === undefined;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
