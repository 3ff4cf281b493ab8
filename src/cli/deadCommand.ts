import type { DeadJobFilter } from '../deadJobs/deadJobFilter.ts';
import { createSluice } from '../Sluice.ts';
import { COMMON_HELP, intFlag, parse, help } from './parse.ts';
import { renderTable } from './renderTable.ts';

export const DEAD_HELP = `sluice dead: inspect and act on dead jobs

  sluice dead list     [filters] [--limit N] [--after-id N] [--json]
  sluice dead redrive  [filters] [--batch-size N]    back into the live queue (history kept)
  sluice dead purge    [filters] [--batch-size N] [--include-redriven]

filters (combined with AND):
  --queue Q  --name N  --older-than-ms N  --newer-than-ms N  --id N[,N…]
${COMMON_HELP}`;

export async function deadCommand(argv: string[]): Promise<number> {
  const { values: v, positionals } = parse(argv, {
    queue: { type: 'string' },
    name: { type: 'string' },
    'older-than-ms': { type: 'string' },
    'newer-than-ms': { type: 'string' },
    id: { type: 'string' },
    limit: { type: 'string' },
    'after-id': { type: 'string' },
    'batch-size': { type: 'string' },
    'include-redriven': { type: 'boolean' },
    json: { type: 'boolean' },
  });
  const action = positionals[0];
  if (v.help || !action) return help(DEAD_HELP) + (action ? 0 : 2);
  const filter: DeadJobFilter = {
    queue: v.queue,
    name: v.name,
    olderThanMs: intFlag('older-than-ms', v['older-than-ms']),
    newerThanMs: intFlag('newer-than-ms', v['newer-than-ms']),
    ids: v.id?.split(',').map((id) => intFlag('id', id.trim()) as number),
    includeRedriven: v['include-redriven'],
  };
  const sluice = createSluice({ url: v.url, tablePrefix: v.prefix, poolMax: 2 });
  try {
    const batchSize = intFlag('batch-size', v['batch-size']);
    if (action === 'list') {
      const jobs = await sluice.deadJobs.list(filter, { limit: intFlag('limit', v.limit) ?? 50, afterId: intFlag('after-id', v['after-id']) });
      if (v.json) process.stdout.write(`${JSON.stringify({ deadJobs: jobs })}\n`);
      else {
        const rows = jobs.map((j) => [j.id, j.queue, j.name, j.retryTimes, j.failedAt.toISOString(), firstLine(j.lastError)]);
        process.stdout.write(`${renderTable(['id', 'queue', 'name', 'attempts', 'failed at', 'last error'], rows)}\n`);
      }
      return 0;
    }
    if (action === 'redrive') {
      const { redriven } = await sluice.deadJobs.redrive(filter, {
        batchSize,
        onProgress: (n) => process.stderr.write(`redriven ${n}…\n`),
      });
      process.stdout.write(`${JSON.stringify({ redriven })}\n`);
      return 0;
    }
    if (action === 'purge') {
      process.stdout.write(`${JSON.stringify(await sluice.deadJobs.purge(filter, { batchSize }))}\n`);
      return 0;
    }
    process.stderr.write(`sluice dead: unknown action "${action}" (list, redrive, purge)\n`);
    return 2;
  } finally {
    await sluice.close();
  }
}

function firstLine(text: string | null): string {
  const line = (text ?? '').split('\n')[0] ?? '';
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}
