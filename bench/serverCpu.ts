import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** The local server process (mariadbd or mysqld), or null when the server runs elsewhere. */
export function findServerPid(): number | null {
  for (const name of ['mariadbd', 'mysqld']) {
    try {
      const pid = Number(execFileSync('pidof', ['-s', name], { encoding: 'utf8' }).trim());
      if (pid > 0) return pid;
    } catch {
      // not running under this name
    }
  }
  return null;
}

/** utime + stime of a process, in µs (clock ticks of 10 ms on Linux), or null if unreadable. */
export function processCpuUs(pid: number | null, statFile = `/proc/${pid}/stat`): number | null {
  if (pid === null) return null;
  try {
    const fields = readFileSync(statFile, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return null;
  }
}

/**
 * CPU of the server threads that serve one database's connections, by thread: MariaDB's
 * PROCESSLIST names each connection's OS thread (TID), whose utime + stime /proc keeps. Read at
 * the start and end of a window, the difference is what those connections cost the server, apart
 * from anyone else's work on a shared server. (MySQL has no TID column: null there.)
 */
export async function connectionThreadsCpuUs(
  query: (sql: string, params: unknown[]) => Promise<{ TID: number }[]>,
  pid: number | null,
  database: string,
): Promise<Map<number, number> | null> {
  if (pid === null) return null;
  let rows: { TID: number }[];
  try {
    rows = await query('SELECT TID FROM information_schema.PROCESSLIST WHERE DB = ? AND ID <> CONNECTION_ID()', [
      database,
    ]);
  } catch {
    return null;
  }
  const cpu = new Map<number, number>();
  for (const { TID } of rows) {
    const us = processCpuUs(Number(TID), `/proc/${pid}/task/${TID}/stat`);
    if (us !== null) cpu.set(Number(TID), us);
  }
  return cpu;
}

/** Pure: the CPU the threads spent between two readings (a thread new at the end counts whole). */
export function threadsCpuDeltaUs(start: ReadonlyMap<number, number>, end: ReadonlyMap<number, number>): number {
  let total = 0;
  for (const [tid, us] of end) total += us - (start.get(tid) ?? 0);
  return total;
}
