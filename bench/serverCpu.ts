import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

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

/** Pure: the CPU threads (or processes) spent between two readings, by id (one new at the end counts whole). */
export function threadsCpuDeltaUs(start: ReadonlyMap<number, number>, end: ReadonlyMap<number, number>): number {
  let total = 0;
  for (const [tid, us] of end) total += us - (start.get(tid) ?? 0);
  return total;
}

/**
 * utime + stime of every process of this host whose executable is one of `names` (/proc/PID/comm,
 * which a server's retitled processes keep: PostgreSQL's backends show "postgres: …" as their
 * command line), µs by PID.
 */
export function namedProcessesCpuUs(names: readonly string[]): Map<number, number> {
  const cpu = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    let comm: string;
    try {
      comm = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
    } catch {
      continue; // gone meanwhile
    }
    if (!names.includes(comm)) continue;
    const us = processCpuUs(pid);
    if (us !== null) cpu.set(pid, us);
  }
  return cpu;
}

/** A reading taken around a timed window (a server meter's): begin() just before it, end() just after. */
export interface Window {
  begin(): Promise<void>;
  end(): Promise<void>;
}

/**
 * The CPU a store's server processes spent over a window, whatever the store: `window` reads
 * every process named `names` (mariadbd, postgres with its backends, redis-server) around the
 * timed window, inside `inner`'s readings when one is given (a server meter's), and usedUs() is
 * the difference (a process new since the first reading counts whole, one gone by the second is
 * lost), or null when none runs on this host (a remote server).
 */
export function serverProcessesMeter(names: readonly string[], inner?: Window) {
  let first: Map<number, number> | null = null;
  let last: Map<number, number> | null = null;
  return {
    window: {
      async begin() {
        await inner?.begin();
        first = namedProcessesCpuUs(names);
      },
      async end() {
        last = namedProcessesCpuUs(names);
        await inner?.end();
      },
    } satisfies Window,
    usedUs(): number | null {
      if (!first || !last || last.size === 0) return null;
      return threadsCpuDeltaUs(first, last);
    },
  };
}

/** utime + stime of the given processes together, µs, or null when one of them cannot be read. */
export function processesCpuUs(pids: readonly (number | undefined)[]): number | null {
  let total = 0;
  for (const pid of pids) {
    const us = pid === undefined ? null : processCpuUs(pid);
    if (us === null) return null;
    total += us;
  }
  return total;
}
