import { openSluice } from './openSluice.ts';
import { COMMON_HELP, help, parse } from './parse.ts';
import { renderTable } from './renderTable.ts';

export const STATS_HELP = `sluice stats: jobs per queue (ready, delayed, running, dead, oldest ready age)

  --json       one JSON document instead of a table
${COMMON_HELP}`;

export async function statsCommand(argv: string[]): Promise<number> {
  const { values: v } = parse(argv, { json: { type: 'boolean' } });
  if (v.help) return help(STATS_HELP);
  const sluice = await openSluice(v, { poolMax: 2 });
  try {
    const stats = await sluice.stats();
    if (v.json) {
      process.stdout.write(`${JSON.stringify({ queues: stats })}\n`);
      return 0;
    }
    const rows = stats.map((s) => [
      s.queue,
      s.ready,
      s.delayed,
      s.running,
      s.dead,
      s.oldestReadyMs === null ? '-' : `${(s.oldestReadyMs / 1000).toFixed(1)}s`,
    ]);
    process.stdout.write(`${renderTable(['queue', 'ready', 'delayed', 'running', 'dead', 'oldest ready'], rows)}\n`);
    return 0;
  } finally {
    await sluice.close();
  }
}
