/**
 * A fleet of N real child processes: spawned together, each announcing itself with the IPC
 * message 'ready'; stopped together with SIGINT, reporting every exit code. Children's stdout
 * and stderr go to our stderr, so our stdout carries only the report.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { profileArgs } from './profileArgs.ts';

export interface Fleet {
  /** performance.now() when the last child said 'ready'. */
  readonly readyAt: number;
  /** SIGINT to every child; resolves with their exit codes (null: killed by a signal). */
  stop(): Promise<(number | null)[]>;
}

const READY_TIMEOUT_MS = 60_000;

export async function startFleet(count: number, args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<Fleet> {
  const children = Array.from({ length: count }, () =>
    spawn(process.execPath, [...profileArgs(), ...args], {
      stdio: ['ignore', 2, 2, 'ipc'],
      env: { ...process.env, ...env },
    }),
  );
  try {
    await Promise.all(children.map(whenReady));
  } catch (error) {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    throw error;
  }
  const readyAt = performance.now();
  return { readyAt, stop: () => Promise.all(children.map(interrupt)) };
}

/**
 * Runs `measure` while the fleet runs, then stops it. A failed measurement is reported as such; a
 * child that then exits non-zero fails a measurement that succeeded.
 */
export async function measureWithFleet<T>(fleet: Fleet, label: string, measure: () => Promise<T>): Promise<T> {
  let result: T;
  try {
    result = await measure();
  } catch (error) {
    await fleet.stop();
    throw error;
  }
  const codes = await fleet.stop();
  if (codes.some((code) => code !== 0))
    throw new Error(`${label}: worker exit codes ${codes.join(', ')} (expected all 0)`);
  return result;
}

function whenReady(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`child ${child.pid} not ready after ${READY_TIMEOUT_MS} ms`)),
      READY_TIMEOUT_MS,
    );
    child.on('message', (message) => {
      if (message !== 'ready') return;
      clearTimeout(timer);
      resolve();
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`child ${child.pid} exited with ${code} before it was ready`));
    });
  });
}

async function interrupt(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const exited = once(child, 'exit');
  child.kill('SIGINT');
  const [code] = (await exited) as [number | null];
  return code;
}
