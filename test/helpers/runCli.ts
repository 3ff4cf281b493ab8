import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { cliArgs, ROOT } from './sourceCli.ts';

/** Runs the `sluice` command as a real process, to its end, and reads its output. */

export { ROOT };

/** test/fixtures/opsJobs: `sleep` (a slow job honouring ctx.signal) and `tick` (recurring, every second). */
export const OPS_JOBS = fileURLToPath(new URL('../fixtures/opsJobs', import.meta.url));

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface CliOptions {
  /** Written to the command's standard input. */
  readonly stdin?: string;
  /** Variables added to (or, when undefined, removed from) the test's environment. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Working folder. @defaultValue the repo's root */
  readonly cwd?: string;
}

/**
 * Runs `sluice <args>` from the sources (stdout and stderr are pipes, so not a TTY) to its end.
 */
export function runCli(args: readonly string[], options: CliOptions = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'warn' };
    for (const [key, value] of Object.entries(options.env ?? {})) {
      if (value === undefined) delete env[key];
      else env[key] = value;
    }
    const cwd = options.cwd ?? ROOT;
    const child = spawn(process.execPath, cliArgs(args, cwd, env), {
      cwd,
      stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      env,
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    if (options.stdin !== undefined) child.stdin?.end(options.stdin);
  });
}

/** The one stdout line that parses as a JSON object; fails with the whole output otherwise. */
export function jsonOutput<T>(result: CliResult): T {
  const lines = result.stdout.split('\n').filter((l) => l.trim().startsWith('{'));
  if (lines.length !== 1)
    throw new Error(
      `expected one JSON line on stdout (exit ${result.code}):\n${result.stdout}\nstderr:\n${result.stderr}`,
    );
  return JSON.parse(lines[0] as string) as T;
}

/** The one stdout line of a CLI run that parses as a JSON object holding `key`. */
export function jsonLine<T = Record<string, unknown>>(result: CliResult, key: string): T {
  for (const line of result.stdout.split('\n')) {
    if (!line.trim().startsWith('{')) continue;
    const parsed = JSON.parse(line) as Record<string, unknown>;
    if (key in parsed) return parsed as T;
  }
  throw new Error(
    `no JSON line with "${key}" in stdout (exit ${result.code}):\n${result.stdout}\nstderr:\n${result.stderr}`,
  );
}
