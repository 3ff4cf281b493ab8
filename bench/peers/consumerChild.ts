/**
 * The consumer child processes of the peers' harness (peer.ts), both sides of their protocol:
 * the parent starts a child with its setting as JSON in argv[2] and an IPC channel; the child
 * builds its consumers and says 'ready'; 'go' starts them, 'stop' (or SIGINT, or the channel
 * closing) stops them and the child exits 0. In latency mode the child also reports, per probe
 * job, when its handler started ('started', on the shared wall clock).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { pathToFileURL } from 'node:url';
import { profileArgs } from '../profileArgs.ts';

/** What the harness reads of a child's setting (the rest travels to the child as it is). */
export interface ChildSetting {
  /** Consumer processes to start (default 1). */
  readonly processes?: number;
}

const READY_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;

/** Consumer children started by Peer.consume: stop() asks each to stop and checks it exited 0. */
export interface RunningConsumers {
  stop(): Promise<void>;
}

/** Milliseconds on the wall clock, sub-millisecond resolution, comparable across processes. */
export function wallNow(): number {
  return performance.timeOrigin + performance.now();
}

/** Parent → child messages. */
export type ToChild = { readonly t: 'go' } | { readonly t: 'stop' };
/** Child → parent messages. */
export type FromChild =
  | { readonly t: 'ready' }
  | { readonly t: 'started'; readonly probe: number; readonly at: number };

/** What a peer's child builds: consumers that start consuming at start() and stop at stop(). */
export interface Consumers {
  start(): Promise<void> | void;
  stop(): Promise<void>;
}

/** In the child: called for every job whose payload carries `probe` (latency mode only). */
export type OnProbe = (probe: number) => void;

/** True when `moduleUrl` is the script node was started with (a peer file run as the child). */
export function isMain(moduleUrl: string): boolean {
  return process.argv[1] !== undefined && pathToFileURL(process.argv[1]).href === moduleUrl;
}

/**
 * The child's side: argv[2] is the setting as JSON. Builds the consumers, says 'ready', starts
 * them on 'go', stops them on 'stop' (or SIGINT, or the parent's IPC channel closing) and exits 0.
 */
export async function runConsumerChild<S>(build: (setting: S, onProbe: OnProbe) => Promise<Consumers>) {
  const setting = JSON.parse(process.argv[2] ?? '{}') as S;
  const send = (m: FromChild) => {
    if (process.connected) process.send?.(m);
  };
  const consumers = await build(setting, (probe) => send({ t: 'started', probe, at: wallNow() }));
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    consumers.stop().then(
      () => process.exit(0),
      (error) => {
        process.stderr.write(`consumer stop failed: ${error}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', stop);
  // The parent gone (interrupted, crashed): stop rather than drain on as an orphan.
  process.on('disconnect', stop);
  process.on('message', (m: ToChild) => {
    if (m.t === 'go') void consumers.start();
    else if (m.t === 'stop') stop();
  });
  send({ t: 'ready' });
}

/** The parent's handle on one consumer child. */
export interface Child {
  go(): void;
  stop(): Promise<void>;
  readonly proc: ChildProcess;
}

export async function startChild(script: string, setting: ChildSetting, env: NodeJS.ProcessEnv): Promise<Child> {
  const proc = spawn(process.execPath, [...profileArgs(), '--import', 'tsx', script, JSON.stringify(setting)], {
    stdio: ['ignore', 2, 2, 'ipc'],
    env: { ...process.env, ...env },
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`consumer not ready after ${READY_TIMEOUT_MS} ms`)),
      READY_TIMEOUT_MS,
    );
    proc.on('message', (m: FromChild) => {
      if (m.t !== 'ready') return;
      clearTimeout(timer);
      resolve();
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`consumer exited with ${code} before it was ready`));
    });
  });
  const stop = async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`consumer died (${proc.exitCode})`);
    const exited = once(proc, 'exit');
    proc.send({ t: 'stop' } satisfies ToChild);
    const timer = setTimeout(() => proc.kill('SIGKILL'), STOP_TIMEOUT_MS);
    const [code] = (await exited) as [number | null];
    clearTimeout(timer);
    if (code !== 0) throw new Error(`consumer exited with ${code} (expected 0)`);
  };
  return { go: () => proc.send({ t: 'go' } satisfies ToChild), stop, proc };
}

/** A peer's consume(): the setting's children, started and sent 'go' at once. */
export async function startConsumers(
  script: string,
  setting: ChildSetting,
  env: NodeJS.ProcessEnv,
): Promise<RunningConsumers> {
  const children = await startChildren(script, setting, env);
  for (const child of children) child.go();
  return { stop: async () => void (await Promise.all(children.map((child) => child.stop()))) };
}

/** The setting's children, started together; if one fails to get ready, the others are killed. */
export async function startChildren(script: string, setting: ChildSetting, env: NodeJS.ProcessEnv): Promise<Child[]> {
  const started = await Promise.allSettled(
    Array.from({ length: setting.processes ?? 1 }, () => startChild(script, setting, env)),
  );
  const failed = started.find((s) => s.status === 'rejected');
  if (!failed) return started.map((s) => (s as PromiseFulfilledResult<Child>).value);
  for (const s of started) if (s.status === 'fulfilled') s.value.proc.kill('SIGKILL');
  throw failed.reason;
}
