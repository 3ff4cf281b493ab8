/**
 * What a drain costs the MySQL/MariaDB server, read around its timed window: statement counters
 * (SHOW GLOBAL STATUS Questions and Com_*), redo writes and fsyncs, redo bytes, and server CPU
 * (the whole server process, and the threads of the bench database's connections: serverCpu.ts).
 * Divided by the jobs the window drained, they say why one system costs more per job than another.
 * The counters are the server's global ones: on a server others use at the same time they count
 * those others too (the bench's own probes are a few per 20 ms). MariaDB 10.8+ has no
 * Innodb_os_log_fsyncs; there Innodb_log_writes stands for the redo flushes (each commit's log write
 * is fsynced at innodb_flush_log_at_trx_commit 1) and Innodb_data_fsyncs counts every fsync the
 * server made, the log's included.
 */
import { readdirSync } from 'node:fs';
import type { Connection, RowDataPacket } from 'mysql2/promise';
import { connectionThreadsCpuUs, findServerPid, processCpuUs } from './serverCpu.ts';

/** Com_kill: the wake-ups' KILL QUERY (an enqueue's ring, a stopping worker's own doorbell). */
const STATEMENTS = [
  'Com_select',
  'Com_insert',
  'Com_update',
  'Com_delete',
  'Com_begin',
  'Com_commit',
  'Com_kill',
] as const;
const REDO = ['Innodb_os_log_fsyncs', 'Innodb_log_writes', 'Innodb_data_fsyncs', 'Innodb_os_log_written'] as const;
/** Data pages written (page cleaner and doublewrite both count) and pages the buffer pool had to read from disk. */
const PAGES = ['Innodb_pages_written', 'Innodb_buffer_pool_reads'] as const;

/** Params: none. Returns (Variable_name, Value) for the counters the reading keeps. */
const SQL_STATUS = `
SHOW GLOBAL STATUS
WHERE Variable_name IN ('Questions', ${[...STATEMENTS, ...REDO, ...PAGES].map((v) => `'${v}'`).join(', ')})`;

/** Per job drained in the window; null where the server has no such counter or no reading. */
export interface ServerCost {
  readonly questions: number;
  /** Com_* per job, keyed without the prefix: select, insert, update, delete, begin, commit. */
  readonly statements: Readonly<Record<string, number>>;
  /** Innodb_os_log_fsyncs (MySQL) or else Innodb_log_writes (MariaDB). */
  readonly redoFlushes: number;
  readonly redoCounter: string;
  readonly dataFsyncs: number;
  readonly redoBytes: number;
  /** Innodb_pages_written: data pages flushed to the tablespaces. */
  readonly pagesWritten: number;
  /** Innodb_buffer_pool_reads: reads the buffer pool could not serve (from disk). */
  readonly pagesRead: number;
  /** µs of CPU of the whole server process, and of the bench database's connection threads. */
  readonly serverCpuUs: number | null;
  readonly connectionCpuUs: number | null;
}

interface Reading {
  readonly status: Map<string, number>;
  readonly cpuUs: number | null;
  /** CPU of every server thread, by TID, and the TIDs serving the bench database's connections. */
  readonly threads: Map<number, number> | null;
  readonly connectionTids: readonly number[];
}

/** utime + stime of every thread of the server process, µs by TID (null where /proc is unreadable). */
function allThreadsCpuUs(pid: number | null): Map<number, number> | null {
  if (pid === null) return null;
  try {
    const cpu = new Map<number, number>();
    for (const tid of readdirSync(`/proc/${pid}/task`).map(Number)) {
      const us = processCpuUs(tid, `/proc/${pid}/task/${tid}/stat`);
      if (us !== null) cpu.set(tid, us);
    }
    return cpu;
  } catch {
    return null;
  }
}

/**
 * CPU the connection threads of either reading spent between the two. A server reuses threads
 * (thread cache, pool), so a thread serving a connection at the end may have served others
 * before: it counts from its CPU at the first reading (every server thread is read there), not
 * from zero; only a thread created after that reading counts whole.
 */
function connectionCpuDeltaUs(a: Reading, b: Reading): number | null {
  if (!a.threads || !b.threads) return null;
  let total = 0;
  for (const tid of new Set([...a.connectionTids, ...b.connectionTids])) {
    const end = b.threads.get(tid);
    // Gone by the end: its share is lost. New since the first reading (absent from it): counts whole.
    if (end !== undefined) total += end - (a.threads.get(tid) ?? 0);
  }
  return total;
}

/** A meter for one window: begin() and end() around it, then cost(jobs). */
export function serverMeter(conn: Connection, database: string) {
  const pid = findServerPid();
  let first: Reading | null = null;
  let last: Reading | null = null;
  const read = async (): Promise<Reading> => {
    const [rows] = await conn.query<RowDataPacket[]>(SQL_STATUS);
    const status = new Map(rows.map((r) => [String(r.Variable_name), Number(r.Value)]));
    const query = async (sql: string, params: unknown[]) =>
      (await conn.query<RowDataPacket[]>(sql, params))[0] as { TID: number }[];
    const connections = await connectionThreadsCpuUs(query, pid, database);
    return {
      status,
      cpuUs: processCpuUs(pid),
      threads: allThreadsCpuUs(pid),
      connectionTids: connections ? [...connections.keys()] : [],
    };
  };
  return {
    window: {
      async begin() {
        first = await read();
      },
      async end() {
        last = await read();
      },
    },
    /** The window's deltas per job; null before both readings. */
    cost(jobs: number): ServerCost | null {
      if (!first || !last || jobs <= 0) return null;
      const a = first;
      const b = last;
      const delta = (name: string) => ((b.status.get(name) ?? 0) - (a.status.get(name) ?? 0)) / jobs;
      const mysqlFsyncs = b.status.has('Innodb_os_log_fsyncs');
      return {
        questions: delta('Questions'),
        statements: Object.fromEntries(STATEMENTS.map((s) => [s.slice(4), delta(s)])),
        redoFlushes: delta(mysqlFsyncs ? 'Innodb_os_log_fsyncs' : 'Innodb_log_writes'),
        redoCounter: mysqlFsyncs ? 'Innodb_os_log_fsyncs' : 'Innodb_log_writes',
        dataFsyncs: delta('Innodb_data_fsyncs'),
        redoBytes: delta('Innodb_os_log_written'),
        pagesWritten: delta('Innodb_pages_written'),
        pagesRead: delta('Innodb_buffer_pool_reads'),
        serverCpuUs: a.cpuUs !== null && b.cpuUs !== null ? (b.cpuUs - a.cpuUs) / jobs : null,
        connectionCpuUs: ((d) => (d === null ? null : d / jobs))(connectionCpuDeltaUs(a, b)),
      };
    },
  };
}
