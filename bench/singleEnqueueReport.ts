/**
 * The single-job enqueue table of the grid's report: every system's 8 producers, idle and while
 * its own consumers drain, against the raw autocommit INSERT, with what each job cost the server
 * (statements, wake-ups, redo flushes) and the CPU per job of the producers and the server.
 */
import { cpuCell } from './gridCpuReport.ts';
import type { SystemInfo, SystemKey } from './gridSystems.ts';
import { fmt, table } from './report.ts';
import { DRAINING_PROCESSES, ENQUEUERS, PAIRED_ROUNDS, type SingleEnqueueRow, WARM_CALLS } from './singleEnqueue.ts';

export function singleTable(single: readonly SingleEnqueueRow[], systems: readonly SystemInfo[]): string {
  const rate = (key: SystemKey, workers: number) => {
    const row = single.find((r) => r.system === key && r.workers === workers);
    return row ? row.jobsPerSec : undefined;
  };
  const rawIdle = rate('raw', 0) ?? null;
  const costOf = (key: SystemKey, workers: number) => {
    const c = single.find((r) => r.system === key && r.workers === workers)?.cost;
    if (!c) return '';
    return `${c.questions.toFixed(2)} / ${(c.statements.kill ?? 0).toFixed(2)} / ${c.redoFlushes.toFixed(2)}`;
  };
  const rows = systems
    .filter((s) => single.some((r) => r.system === s.key))
    .map((s) => {
      const idle = rate(s.key, 0);
      const draining = rate(s.key, DRAINING_PROCESSES);
      const shown = (n: number | null | undefined) => (n === undefined ? '—' : n === null ? 'failed' : fmt(n));
      return [
        s.key === 'raw' ? 'raw autocommit INSERT' : s.name,
        shown(idle),
        shown(draining),
        idle && rawIdle ? (idle / rawIdle).toFixed(2) : '',
        costOf(s.key, 0),
        costOf(s.key, DRAINING_PROCESSES),
        cpuCell(single.find((r) => r.system === s.key && r.workers === 0)?.cpu),
        s.durability ?? '',
      ];
    });
  return [
    `single-job enqueue: ${ENQUEUERS} producer processes per system, one job per call, each awaited, after ${WARM_CALLS} untimed calls each (or 5 s of them: the steady state); with no consumer, and while ${DRAINING_PROCESSES} consumer processes of its own kind (concurrency 50) drain the queue; idle, sluice and the raw INSERT ran ${PAIRED_ROUNDS} rounds each, in turn (the order flipping), and show their median round`,
    table(
      [
        'system',
        'idle jobs/s',
        'draining jobs/s',
        '÷ raw INSERT (idle)',
        'per job idle: statements / KILLs / redo',
        'per job draining',
        'CPU µs per job idle: producers + server',
        'durability',
      ],
      rows,
    ),
    "    per job: SHOW GLOBAL STATUS Questions, Com_kill and redo flushes over the window ÷ jobs enqueued in it (sluice and the raw INSERT; draining: the consumers' statements included)",
    "    CPU: utime + stime of the producer processes and of the store's server processes over the idle window (from /proc), per job enqueued",
    "    the raw INSERT while draining is no ceiling: its consumers' claims (SELECT … FOR UPDATE SKIP LOCKED, DELETE) deadlock the INSERTs, which are sent again (the INSERTs per job above), so only its idle row is compared",
  ].join('\n');
}
