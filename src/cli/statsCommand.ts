import { type BoundedCount, DEPTH_MAX_DEFAULT } from '../api/queuesApi.ts';
import { openSluice } from './openSluice.ts';
import { COMMON_HELP, help, intFlag, parse } from './parse.ts';
import { renderTable } from './renderTable.ts';

export const STATS_HELP = `sluice stats: jobs per queue (ready, delayed, running, dead, oldest ready age),
each count read from index entries and stopped at --max ("10000+" past it)

  --max N      most index entries each count reads (default ${DEPTH_MAX_DEFAULT})
  --json       one JSON document instead of a table
${COMMON_HELP}`;

export async function statsCommand(argv: string[]): Promise<number> {
  const { values: v } = parse(argv, { json: { type: 'boolean' }, max: { type: 'string' } });
  if (v.help) return help(STATS_HELP);
  const sluice = await openSluice(v, { poolMax: 2 });
  try {
    const depth = await sluice.queues.depth({ max: intFlag('max', v.max) ?? DEPTH_MAX_DEFAULT });
    if (v.json) {
      process.stdout.write(`${JSON.stringify({ queues: depth })}\n`);
      return 0;
    }
    const n = (c: BoundedCount) => `${c.count}${c.exact ? '' : '+'}`;
    const rows = depth.map((s) => [
      s.queue,
      n(s.ready),
      n(s.notDue),
      n(s.running),
      n(s.dead),
      s.oldestReadyMs === null ? '-' : `${(s.oldestReadyMs / 1000).toFixed(1)}s`,
    ]);
    process.stdout.write(`${renderTable(['queue', 'ready', 'delayed', 'running', 'dead', 'oldest ready'], rows)}\n`);
    return 0;
  } finally {
    await sluice.close();
  }
}
