import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** What the operations tests share about one `sluice` command run to its end. */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = fileURLToPath(new URL('../../bin/sluice.js', import.meta.url));

/** test/fixtures/opsJobs: `sleep` (a slow job honouring ctx.signal) and `tick` (recurring, every second). */
export const OPS_JOBS = fileURLToPath(new URL('../fixtures/opsJobs', import.meta.url));

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `node bin/sluice.js <args>` (stdout and stderr are pipes, so not a TTY) to its end;
 * `stdin`, when given, is written to the command's standard input.
 */
export function runSluice(args: readonly string[], options: { stdin?: string } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: ROOT,
      stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      env: { ...process.env, LOG_LEVEL: 'warn' },
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
  if (lines.length !== 1) throw new Error(`expected one JSON line on stdout (exit ${result.code}):\n${result.stdout}\nstderr:\n${result.stderr}`);
  return JSON.parse(lines[0] as string) as T;
}
