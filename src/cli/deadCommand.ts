import type { DeadJobFilter } from '../deadJobs/deadJobFilter.ts';
import { openSluice } from './openSluice.ts';
import { COMMON_HELP, choice, help, intFlag, parse } from './parse.ts';
import { renderTable } from './renderTable.ts';
import { terminalJson } from './terminalText.ts';
import { UsageError } from './UsageError.ts';

export const DEAD_HELP = `sluice dead: inspect and act on dead jobs

  sluice dead list     [filters] [--limit N] [--after-id N] [--json]
  sluice dead redrive  [filters] [--batch-size N]    back into the live queue (history kept)
  sluice dead purge    filters|--all [--batch-size N] [--include-redriven]

filters (combined with AND):
  --queue Q  --name N  --older-than-ms N  --newer-than-ms N  --id N[,N…]
  --error-code C       died of an error with this code (its last kept attempt error)
  --error-contains T   died of an error whose text contains T (ignoring case)
  --all      purge: every dead job (purge refuses to run without a filter or --all)
${COMMON_HELP}`;

const ACTIONS = ['list', 'redrive', 'purge'] as const;

export async function deadCommand(argv: string[]): Promise<number> {
  const { values: v, positionals } = parse(
    argv,
    {
      queue: { type: 'string' },
      name: { type: 'string' },
      'older-than-ms': { type: 'string' },
      'newer-than-ms': { type: 'string' },
      id: { type: 'string' },
      'error-code': { type: 'string' },
      'error-contains': { type: 'string' },
      all: { type: 'boolean' },
      limit: { type: 'string' },
      'after-id': { type: 'string' },
      'batch-size': { type: 'string' },
      'include-redriven': { type: 'boolean' },
      json: { type: 'boolean' },
    },
    1,
  );
  if (v.help) return help(DEAD_HELP);
  const action = choice('action', positionals[0], ACTIONS);
  const filter: DeadJobFilter = {
    queue: v.queue,
    name: v.name,
    olderThanMs: intFlag('older-than-ms', v['older-than-ms']),
    newerThanMs: intFlag('newer-than-ms', v['newer-than-ms']),
    ids: v.id?.split(',').map((id) => intFlag('id', id.trim(), 1) as number),
    includeRedriven: v['include-redriven'],
    errorCode: v['error-code'],
    errorContains: v['error-contains'],
  };
  const narrowed = [
    filter.queue,
    filter.name,
    filter.olderThanMs,
    filter.newerThanMs,
    filter.ids,
    filter.errorCode,
    filter.errorContains,
  ].some((f) => f !== undefined);
  if (action === 'purge' && !narrowed && !v.all)
    throw new UsageError(
      'purge without a filter deletes every dead job: add --all to mean that, or a filter (--queue, --name, --older-than-ms, --newer-than-ms, --id, --error-code, --error-contains)',
    );
  if (v.all && (action !== 'purge' || narrowed)) throw new UsageError('--all is for purge without filters');
  const batchSize = intFlag('batch-size', v['batch-size'], 1);
  const limit = intFlag('limit', v.limit, 1) ?? 50;
  const afterId = intFlag('after-id', v['after-id']);
  const sluice = await openSluice(v, { poolMax: 2 });
  try {
    if (action === 'list') {
      const jobs = await sluice.deadJobs.list(filter, { limit, afterId });
      if (v.json) process.stdout.write(`${terminalJson({ deadJobs: jobs })}\n`);
      else {
        const rows = jobs.map((j) => [
          j.id,
          j.queue,
          j.name,
          j.retryTimes,
          j.failedAt.toISOString(),
          firstLine(j.lastError),
        ]);
        process.stdout.write(`${renderTable(['id', 'queue', 'name', 'attempts', 'failed at', 'last error'], rows)}\n`);
      }
      return 0;
    }
    if (action === 'redrive') {
      const { redriven } = await sluice.deadJobs.redrive(filter, {
        batchSize,
        onProgress: (n) => process.stderr.write(`redriven ${n}…\n`),
      });
      process.stdout.write(`${terminalJson({ redriven })}\n`);
      return 0;
    }
    process.stdout.write(`${terminalJson(await sluice.deadJobs.purge(filter, { batchSize }))}\n`);
    return 0;
  } finally {
    await sluice.close();
  }
}

function firstLine(text: string | null): string {
  const line = (text ?? '').split('\n')[0] ?? '';
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}
