import type { BoundedCount } from '../api/queuesApi.ts';
import { DEPTH_MAX_DEFAULT } from '../stats/queueDepth.ts';
import { openSluice } from './openSluice.ts';
import { COMMON_HELP, help, intFlag, parse } from './parse.ts';
import { renderTable } from './renderTable.ts';
import { terminalJson } from './terminalText.ts';

export const STATS_HELP = `sluice stats: jobs per queue (ready, delayed, held, running, dead, oldest ready
age; held: waiting for parents or a limit, never due until released),
each count read from index entries and stopped at --max ("10000+" past it), and what holds a
queue's ready jobs back now, if anything: its concurrency cap, its rate, or a pause until later

  --max N      most index entries each count reads (default ${DEPTH_MAX_DEFAULT})
  --json       one JSON document instead of a table
${COMMON_HELP}`;

export async function statsCommand(argv: string[]): Promise<number> {
  const { values: v } = parse(argv, { json: { type: 'boolean' }, max: { type: 'string' } });
  if (v.help) return help(STATS_HELP);
  const sluice = await openSluice(v, { poolMax: 2 });
  try {
    const queues = await sluice.queues.depth({ max: intFlag('max', v.max) ?? DEPTH_MAX_DEFAULT });
    // The limits of the queues shown, by key (never found in a listing capped in name order).
    const limits = await sluice.queues.limits({ queues: queues.map((q) => q.queue) });
    const blocked = new Map(limits.map((l) => [l.queue, l.blocked]));
    const depth = queues.map((d) => ({ ...d, heldBack: blocked.get(d.queue) ?? null }));
    if (v.json) {
      process.stdout.write(`${terminalJson({ queues: depth })}\n`);
      return 0;
    }
    const n = (c: BoundedCount) => `${c.count}${c.exact ? '' : '+'}`;
    const rows = depth.map((s) => [
      s.queue,
      n(s.ready),
      n(s.notDue),
      n(s.held),
      n(s.running),
      n(s.dead),
      s.oldestReadyMs === null ? '-' : `${(s.oldestReadyMs / 1000).toFixed(1)}s`,
      s.heldBack ?? '-',
    ]);
    const head = ['queue', 'ready', 'delayed', 'held', 'running', 'dead', 'oldest ready', 'held back'];
    process.stdout.write(`${renderTable(head, rows)}\n`);
    return 0;
  } finally {
    await sluice.close();
  }
}
