import type { BoundedCount } from '../api/queuesApi.ts';
import type { Sluice } from '../Sluice.ts';
import { DEPTH_MAX_DEFAULT, DEPTH_QUEUES_DEFAULT } from '../stats/queueDepth.ts';
import { openSluice } from './openSluice.ts';
import { COMMON_HELP, help, intFlag, parse } from './parse.ts';
import { renderTable } from './renderTable.ts';
import { terminalJson } from './terminalText.ts';

export const STATS_HELP = `sluice stats: jobs per queue (ready, delayed, held, running, dead, oldest ready
age; held: waiting for parents or a limit, never due until released),
each count read from index entries and stopped at --max ("10000+" past it), and what holds a
queue's ready jobs back now, if anything: its concurrency cap, its rate, or a pause until later.
The first ${DEPTH_QUEUES_DEFAULT} queues in name order (fewer when the listing stops at its read
budget: sluice.queues.list()); the queues past them are summed in one last row, "(N more queues)"
(JSON: "others"). Then each job name whose jobs running workers gave back for
want of a handler and no running worker knows ("no running worker knows job X"): its jobs wait
until a worker that has it starts

  --max N      most index entries each count reads (default ${DEPTH_MAX_DEFAULT})
  --json       one JSON document instead of a table
${COMMON_HELP}`;

/**
 * What `sluice stats` reads, in a fixed number of statements whatever the number of queues: the
 * first DEPTH_QUEUES_DEFAULT queues' depths, the queues past them summed, the shown queues' limits
 * by key, and the job names no running worker knows (`npm run bench -- shape` measures it).
 */
export async function readStats(sluice: Sluice, max: number) {
  const [page, unknownJobs] = await Promise.all([
    sluice.queues.list({ max: DEPTH_QUEUES_DEFAULT }),
    sluice.workers.unknownJobs(),
  ]);
  const queues = page.queues.length === 0 ? [] : await sluice.queues.depth({ queues: page.queues, max });
  // The queues past the page: their sums, as one more row, never dropped.
  const others = page.next === null ? null : await sluice.queues.others(page.next, { max });
  // The limits of the queues shown, by key (never found in a listing capped in name order).
  const limits = await sluice.queues.limits({ queues: queues.map((q) => q.queue) });
  const blocked = new Map(limits.map((l) => [l.queue, l.blocked]));
  const depth = queues.map((d) => ({ ...d, heldBack: blocked.get(d.queue) ?? null }));
  return { depth, others, unknownJobs };
}

export async function statsCommand(argv: string[]): Promise<number> {
  const { values: v } = parse(argv, { json: { type: 'boolean' }, max: { type: 'string' } });
  if (v.help) return help(STATS_HELP);
  const sluice = await openSluice(v, { poolMax: 2 });
  try {
    const { depth, others, unknownJobs } = await readStats(sluice, intFlag('max', v.max) ?? DEPTH_MAX_DEFAULT);
    if (v.json) {
      process.stdout.write(
        `${terminalJson({ queues: depth, ...(others && others.queues.count > 0 ? { others } : {}), unknownJobs })}\n`,
      );
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
    if (others && others.queues.count > 0)
      rows.push([
        `(${n(others.queues)} more queues)`,
        n(others.ready),
        n(others.notDue),
        n(others.held),
        n(others.running),
        n(others.dead),
        '-',
        '-',
      ]);
    const head = ['queue', 'ready', 'delayed', 'held', 'running', 'dead', 'oldest ready', 'held back'];
    process.stdout.write(`${renderTable(head, rows)}\n`);
    for (const u of unknownJobs) {
      process.stdout.write(
        `no running worker knows job ${u.name} (queue ${u.queues.join(', ')}): ${u.workers} worker(s) gave back ` +
          `${u.givenBack} of its job(s), no attempt spent; they wait for a worker whose jobs folder has it\n`,
      );
    }
    return 0;
  } finally {
    await sluice.close();
  }
}
