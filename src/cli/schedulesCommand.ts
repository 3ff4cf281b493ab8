import { jobsFolder, requireJobsFolder } from './jobsFolder.ts';
import { openSluice } from './openSluice.ts';
import { COMMON_HELP, help, parse } from './parse.ts';
import { renderTable } from './renderTable.ts';
import { terminalJson } from './terminalText.ts';

export const SCHEDULES_HELP = `sluice schedules: the recurring jobs (definitions with a schedule) and their slots

  --jobs DIR   folder of job files, resolved against the current folder (default: SLUICE_JOBS, then ./jobs)
  --json       one JSON document instead of a table

The next slot is node-cron's next tick from now; the last slot is the latest one enqueued
(from the idempotency keys, kept for idempotencyRetentionMs after its job finished), with its
job's id and state.
${COMMON_HELP}`;

export async function schedulesCommand(argv: string[]): Promise<number> {
  const { values: v } = parse(argv, { jobs: { type: 'string' }, json: { type: 'boolean' } });
  if (v.help) return help(SCHEDULES_HELP);
  const folder = requireJobsFolder(jobsFolder(v.jobs));
  const sluice = await openSluice(v, { poolMax: 2 });
  try {
    const schedules = await sluice.schedules.files(folder);
    if (v.json) {
      process.stdout.write(`${terminalJson({ schedules })}\n`);
      return 0;
    }
    const rows = schedules.map((s) => [
      s.name,
      s.queue,
      `${s.schedule}${s.timezone ? ` (${s.timezone})` : ''}`,
      s.nextSlot?.toISOString() ?? '-',
      s.lastSlot?.toISOString() ?? '-',
      s.lastJobId === null ? '-' : `${s.lastJobId} ${s.lastJobState ?? 'gone'}`,
    ]);
    process.stdout.write(`${renderTable(['name', 'queue', 'schedule', 'next slot', 'last slot', 'last job'], rows)}\n`);
    return 0;
  } finally {
    await sluice.close();
  }
}
