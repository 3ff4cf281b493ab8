import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** The demo's own job folder (jobs/demo.ts here, jobs/demo.js once built): the demo never loads the app's jobs/. */
export const DEMO_JOBS = fileURLToPath(new URL('./jobs', import.meta.url));

export interface DemoProcess {
  readonly label: string;
  readonly child: ChildProcess;
}

/** Log events of a child that mean the demo is not going well (the children log at warn and above). */
const PROBLEM_EVENTS = new Set(['job:failed', 'job:dead', 'worker:error', 'maintenance:error', 'claim:lost']);

/**
 * How the demo starts `sluice <args>` as a child: this very command (the installed bin, or the
 * sources with the loader flags the demo itself runs under), with the server URL in the
 * environment — never in argv, where `ps` shows it to every user of the host.
 */
export function childCommand(args: readonly string[], url: string): { args: string[]; env: NodeJS.ProcessEnv } {
  const { SLUICE_JOBS: _ignored, ...env } = process.env;
  return {
    args: [...process.execArgv, process.argv[1] as string, ...args],
    env: { ...env, MYSQL_URL: url, LOG_LEVEL: 'warn' },
  };
}

/**
 * Spawns `sluice <args>` and waits for its PM2-style 'ready' message; a child that exits first is
 * an error. Its failed jobs and errors (JSON log lines at warn and above) go to `onProblem`.
 */
export async function startChild(
  label: string,
  args: readonly string[],
  url: string,
  onProblem: (line: string) => void,
): Promise<DemoProcess> {
  const command = childCommand(args, url);
  const child = spawn(process.execPath, command.args, {
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    env: command.env,
  });
  if (child.stdout) {
    createInterface({ input: child.stdout, crlfDelay: Infinity }).on('line', (text) => {
      let line: { event?: string; msg?: string };
      try {
        line = JSON.parse(text) as typeof line;
      } catch {
        return;
      }
      if (line.event && PROBLEM_EVENTS.has(line.event)) onProblem(`${label} (pid ${child.pid}): ${line.msg}`);
    });
  }
  await new Promise<void>((resolve, reject) => {
    child.on('message', (m) => m === 'ready' && resolve());
    child.on('exit', (code, signal) => reject(new Error(`${label} exited with ${code ?? signal} before it was ready`)));
    child.on('error', reject);
  });
  return { label, child };
}

/** SIGINT (a graceful stop), then the exit code (null: killed by a signal). */
export async function stopChild({ child }: DemoProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const exited = once(child, 'exit');
  child.kill('SIGINT');
  const [code] = (await exited) as [number | null];
  return code;
}

/** SIGKILL for whatever still runs (a failed demo's last resort). */
export function killChildren(processes: readonly DemoProcess[]): void {
  for (const { child } of processes) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}
