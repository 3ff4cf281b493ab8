import { explainFailure } from '../db/explainFailure.ts';
import { OptionsError, SluiceError } from '../errors.ts';
import { CommandError } from './CommandError.ts';
import { UsageError } from './UsageError.ts';

/** Exit codes of the `sluice` command (README "CLI"). */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

export interface Failure {
  /** EXIT.usage for a command line sluice cannot run, EXIT.failure otherwise. */
  readonly exitCode: number;
  /** One line, without a stack. */
  readonly line: string;
  /** With `--verbose` or DEBUG: the stack and the chain of causes. */
  readonly details: string;
}

/**
 * What the CLI says when a command fails: one line a user can act on. Usage errors and invalid
 * options exit 2, everything else 1. Stacks only in `details`.
 */
export function describeFailure(failure: unknown): Failure {
  const details = stackOf(failure);
  // What the library's calls already say of a missing table or a full server, said of any statement.
  const error = explainFailure(null, failure);
  if (error instanceof UsageError) return { exitCode: EXIT.usage, line: error.message, details };
  if (error instanceof OptionsError) return { exitCode: EXIT.usage, line: error.message, details };
  if (error instanceof CommandError) return { exitCode: EXIT.failure, line: error.message, details };
  if (error instanceof SluiceError)
    return { exitCode: EXIT.failure, line: `${firstLine(error.message)} [${error.code}]`, details };
  return { exitCode: EXIT.failure, line: systemMessage(error), details };
}

/** Node and driver errors a user can cause, said plainly; anything else by its first line. */
function systemMessage(error: unknown): string {
  const e = error as {
    code?: string;
    path?: string;
    port?: number;
    address?: string;
    sqlMessage?: string;
    message?: string;
  };
  switch (e?.code) {
    case 'ENOENT':
      return e.path ? `no such file or folder: ${e.path}` : firstLine(e.message);
    case 'EACCES':
    case 'EPERM':
      return e.path ? `permission denied: ${e.path}` : firstLine(e.message);
    case 'EISDIR':
      return `is a folder, not a file: ${e.path}`;
    case 'EADDRINUSE':
      return `port ${e.port} on ${e.address ?? 'this host'} is already in use`;
    case 'ERR_SOCKET_BAD_PORT':
      return firstLine(e.message);
  }
  if (e?.sqlMessage) return `${e.code}: ${e.sqlMessage}`;
  const line = firstLine(e?.message ?? String(error));
  return `${line} (run with --verbose for the stack)`;
}

function firstLine(text: string | undefined): string {
  const lines = (text ?? '').trim().split('\n');
  return lines.length > 1 ? `${lines[0]} (--verbose for more)` : (lines[0] ?? '');
}

/** The error's stack and those of its causes. */
function stackOf(error: unknown): string {
  const parts: string[] = [];
  for (let e = error, depth = 0; e !== undefined && e !== null && depth < 5; depth++) {
    parts.push(depth === 0 ? String((e as Error).stack ?? e) : `caused by: ${String((e as Error).stack ?? e)}`);
    e = (e as { cause?: unknown }).cause;
  }
  return parts.join('\n');
}
