import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach } from 'vitest';
import { cliArgs, ROOT } from './sourceCli.ts';

/**
 * Spawns real `sluice work` / `sluice maintenance` processes (the run's transpiled sources, or
 * the TypeScript ones under tsx: cliArgs in sourceCli.ts) for the tests where processes are the
 * point: crashes, stalls, signals, several claimers at once.
 *
 * Every child is tracked. After each test (and after the file) any child still alive is
 * SIGKILLed, and a test that passed but left a child running fails: a test must not leak
 * processes. When a test fails, the log tail and stderr of each of its children are written to
 * stderr for diagnosis.
 */

/** test/fixtures/jobs: the handlers process tests run (`--jobs FIXTURE_JOBS`). */
export const FIXTURE_JOBS = fileURLToPath(new URL('../fixtures/jobs', import.meta.url));

/** One pino JSON line from a child's stdout. */
export interface LogLine {
  readonly level: number;
  readonly time: number;
  readonly pid: number;
  readonly msg?: string;
  readonly event?: string;
  readonly [field: string]: unknown;
}

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface SluiceProcess {
  readonly pid: number;
  /** `work …` / `maintenance …`, for messages. */
  readonly label: string;
  /** Parsed JSON log lines, in arrival order (grows while the process runs). */
  readonly lines: LogLine[];
  /**
   * Resolves on the IPC 'ready' message; rejects if the process ends first. The lines the process
   * logged before it (worker:started, leader:acquired, …) may not have arrived yet: pino writes
   * them asynchronously, and the IPC message does not wait for them. Wait for such a line with
   * waitForLine and a real timeout.
   */
  readonly ready: Promise<void>;
  /** Resolves once the process ended and its output was read to the end. */
  readonly exited: Promise<Exit>;
  /** True until the process has ended. */
  readonly running: boolean;
  /** Lines with this `event`. */
  events(event: string): LogLine[];
  /**
   * The first line (already seen or still to come) that matches; rejects on timeout or exit. A
   * timeout of 0 suits only a line that must have arrived: one logged before the process exited,
   * or before a later line of the same process that was already seen — never one logged before
   * `ready` (see there).
   */
  waitForLine(predicate: (line: LogLine) => boolean, timeoutMs?: number, what?: string): Promise<LogLine>;
  kill(signal: NodeJS.Signals): void;
  /** SIGINT, then the exit. */
  stop(): Promise<Exit>;
  /** Command, exit, stderr and the last log lines: for failure messages. */
  describe(): string;
}

export interface SpawnOptions {
  /** LOG_LEVEL of the child. @defaultValue 'debug' (job:claimed / job:completed / quiet sweeps are debug) */
  readonly logLevel?: string;
  /** Working folder. @defaultValue the repo's root */
  readonly cwd?: string;
  /** Variables added to the test's environment. */
  readonly env?: Readonly<Record<string, string>>;
}

const children = new Set<SluiceProcess>();

/** Starts `sluice <command> <args>` with an IPC channel, JSON logs on a pipe, and stderr kept. */
export function spawnSluice(
  command: 'work' | 'maintenance' | 'dashboard',
  args: readonly string[],
  options: SpawnOptions = {},
): SluiceProcess {
  const label = [command, ...args].join(' ');
  const cwd = options.cwd ?? ROOT;
  const env = { ...process.env, ...options.env, LOG_LEVEL: options.logLevel ?? 'debug' };
  const child = spawn(process.execPath, cliArgs([command, ...args], cwd, env), {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    env,
  });
  const { pid, stdout, stderr: errStream } = child;
  if (pid === undefined || !stdout || !errStream) throw new Error(`could not spawn sluice ${label}`);
  const lines: LogLine[] = [];
  const otherStdout: string[] = [];
  let stderr = '';
  let exit: Exit | null = null;
  const watchers = new Set<() => void>();
  const notify = () => {
    for (const watcher of [...watchers]) watcher();
  };

  let partial = '';
  stdout.setEncoding('utf8');
  stdout.on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop() ?? '';
    for (const text of parts) {
      if (text.trim() === '') continue;
      try {
        lines.push(JSON.parse(text) as LogLine);
      } catch {
        otherStdout.push(text);
      }
    }
    notify();
  });
  errStream.setEncoding('utf8');
  errStream.on('data', (chunk: string) => {
    stderr += chunk;
  });

  const exited = new Promise<Exit>((resolve) => {
    child.on('close', (code, signal) => {
      exit = { code, signal };
      resolve(exit);
      notify();
    });
  });

  const describe = (): string => {
    const tail = lines.slice(-25).map((l) => JSON.stringify(l));
    return [
      `sluice ${label} (pid ${pid}): ${exit ? `exited with code ${exit.code}, signal ${exit.signal}` : 'running'}`,
      `stderr: ${stderr.trim() === '' ? '(empty)' : `\n${stderr.trimEnd()}`}`,
      ...(otherStdout.length > 0 ? [`non-JSON stdout:\n${otherStdout.slice(-10).join('\n')}`] : []),
      `last ${tail.length} of ${lines.length} log lines:${tail.length > 0 ? `\n${tail.join('\n')}` : ' (none)'}`,
    ].join('\n');
  };

  const ready = new Promise<void>((resolve, reject) => {
    child.on('message', (message) => {
      if (message === 'ready') resolve();
    });
    void exited.then(() => reject(new Error(`sluice ${label} ended before it was ready\n${describe()}`)));
  });
  ready.catch(() => undefined); // awaited by tests that need it; never an unhandled rejection

  const waitForLine = (
    predicate: (line: LogLine) => boolean,
    timeoutMs = 30_000,
    what = 'a matching log line',
  ): Promise<LogLine> =>
    new Promise<LogLine>((resolve, reject) => {
      let seen = 0;
      const check = () => {
        for (; seen < lines.length; seen++) {
          const line = lines[seen] as LogLine;
          if (predicate(line)) return finish(() => resolve(line));
        }
        if (exit) finish(() => reject(new Error(`sluice ${label}: ended before ${what}\n${describe()}`)));
      };
      const timer = setTimeout(
        () => finish(() => reject(new Error(`sluice ${label}: no ${what} within ${timeoutMs} ms\n${describe()}`))),
        timeoutMs,
      );
      const finish = (settle: () => void) => {
        clearTimeout(timer);
        watchers.delete(check);
        settle();
      };
      watchers.add(check);
      check();
    });

  const handle: SluiceProcess = {
    pid,
    label,
    lines,
    ready,
    exited,
    get running() {
      return exit === null;
    },
    events: (event) => lines.filter((l) => l.event === event),
    waitForLine,
    kill(signal) {
      if (exit === null) child.kill(signal);
    },
    async stop() {
      if (exit === null) child.kill('SIGINT');
      return exited;
    },
    describe,
  };
  children.add(handle);
  return handle;
}

/** SIGKILLs every tracked child still alive and waits for it; returns those it had to kill. */
async function killLeftovers(): Promise<SluiceProcess[]> {
  const alive = [...children].filter((c) => c.running);
  for (const c of alive) c.kill('SIGKILL'); // SIGKILL also ends a SIGSTOPped process
  await Promise.all(alive.map((c) => c.exited));
  return alive;
}

afterEach(async (ctx) => {
  const failed = ctx.task.result?.state === 'fail';
  if (failed) {
    for (const c of children) process.stderr.write(`\n--- ${c.describe()}\n`);
  }
  const leaked = await killLeftovers();
  children.clear();
  if (leaked.length > 0 && !failed) {
    throw new Error(
      `test left ${leaked.length} sluice process(es) running (SIGKILLed now): ${leaked.map((c) => `${c.pid} ${c.label}`).join('; ')}`,
    );
  }
});

afterAll(async () => {
  await killLeftovers();
  children.clear();
});

// Last resort if the test process itself goes away: no orphaned workers.
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

export interface WorkerFlags {
  readonly queues: string;
  readonly concurrency?: number;
  readonly claim?: 'random-head' | 'skip-locked';
  readonly lockTimeoutMs?: number;
  readonly heartbeatIntervalMs?: number;
  readonly pollIntervalMs?: number;
  readonly maxPollIntervalMs?: number;
  readonly shutdownTimeoutMs?: number;
  /** false: `--no-doorbell`. */
  readonly doorbell?: false;
  readonly metricsIntervalMs?: number;
  readonly fairSettleIntervalMs?: number;
}

/** `sluice work --url URL --jobs test/fixtures/jobs …`: a worker process running the fixture jobs. */
export function spawnWorker(url: string, flags: WorkerFlags, options?: SpawnOptions): SluiceProcess {
  return spawnSluice(
    'work',
    [
      '--url',
      url,
      '--jobs',
      FIXTURE_JOBS,
      '--queues',
      flags.queues,
      ...flag('--concurrency', flags.concurrency),
      ...flag('--claim', flags.claim),
      ...flag('--lock-timeout-ms', flags.lockTimeoutMs),
      ...flag('--heartbeat-interval-ms', flags.heartbeatIntervalMs),
      ...flag('--poll-interval-ms', flags.pollIntervalMs),
      ...flag('--max-poll-interval-ms', flags.maxPollIntervalMs),
      ...flag('--shutdown-timeout-ms', flags.shutdownTimeoutMs),
      ...flag('--metrics-interval-ms', flags.metricsIntervalMs),
      ...flag('--fair-settle-interval-ms', flags.fairSettleIntervalMs),
      ...(flags.doorbell === false ? ['--no-doorbell'] : []),
    ],
    options,
  );
}

export interface MaintenanceFlags {
  readonly schedule?: string;
  readonly lockTimeoutMs?: number;
  readonly leaseMs?: number;
  readonly jitterMs?: number;
  readonly missedHeartbeats?: number;
}

/** `sluice maintenance --url URL …`: the maintenance process (every second unless told otherwise). */
export function spawnMaintenance(url: string, flags: MaintenanceFlags, options?: SpawnOptions): SluiceProcess {
  return spawnSluice(
    'maintenance',
    [
      '--url',
      url,
      '--schedule',
      flags.schedule ?? '*/1 * * * * *',
      ...flag('--lock-timeout-ms', flags.lockTimeoutMs),
      ...flag('--lease-ms', flags.leaseMs),
      ...flag('--jitter-ms', flags.jitterMs),
      ...flag('--missed-heartbeats', flags.missedHeartbeats),
    ],
    options,
  );
}

function flag(name: string, value: string | number | undefined): string[] {
  return value === undefined ? [] : [name, String(value)];
}
