import { readFileSync } from 'node:fs';

/** The process's state letter from /proc (R, S, T = stopped, Z = zombie, …); throws if there is no such process. */
export function processState(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2)[0] ?? '?';
}

/** Alive and not a zombie: a process whose parent died is reparented, and may linger as a zombie. */
export function isRunning(pid: number): boolean {
  try {
    return processState(pid) !== 'Z';
  } catch {
    return false;
  }
}
