import type { SluiceApi } from '../api/SluiceApi.ts';
import type { Schedule, ScheduleSpec } from '../api/schedulesApi.ts';
import { jobsFolder, requireJobsFolder } from './jobsFolder.ts';
import { openSluice } from './openSluice.ts';
import { COMMON_HELP, choice, help, intFlag, parse } from './parse.ts';
import { renderTable } from './renderTable.ts';
import { terminalJson } from './terminalText.ts';
import { UsageError } from './UsageError.ts';

export const SCHEDULES_HELP = `sluice schedules: run-time schedules, and the recurring jobs of job files

  sluice schedules             the recurring jobs of the job files (when a jobs folder is
                               found), then the first page of run-time schedules
  sluice schedules list [--after KEY] [--max N]
                               run-time schedules in key order (at most N, default 100, up to 500)
  sluice schedules get KEY     one run-time schedule and its latest jobs
  sluice schedules upsert KEY --job NAME (--cron EXPR [--tz ZONE] | --every-ms N)
        [--queue Q] [--payload JSON] [--start-at ISO] [--end-at ISO] [--limit N]
        [--missed skip|once|all]
                               create or change a run-time schedule; the maintenance process
                               fires its ticks (see docs/schedules.md)
  sluice schedules pause KEY | resume KEY | remove KEY

  --jobs DIR   folder of job files, resolved against the current folder (default: SLUICE_JOBS, then ./jobs)
  --json       one JSON document instead of a table

A job file's next slot is node-cron's next tick from now; its last slot is the latest one enqueued
(from the idempotency keys, kept for idempotencyRetentionMs after its job finished), with its
job's id and state.
${COMMON_HELP}`;

const ACTIONS = ['list', 'get', 'upsert', 'pause', 'resume', 'remove'] as const;

export async function schedulesCommand(argv: string[]): Promise<number> {
  const { values: v, positionals } = parse(
    argv,
    {
      jobs: { type: 'string' },
      json: { type: 'boolean' },
      after: { type: 'string' },
      max: { type: 'string' },
      job: { type: 'string' },
      cron: { type: 'string' },
      tz: { type: 'string' },
      'every-ms': { type: 'string' },
      queue: { type: 'string' },
      payload: { type: 'string' },
      'start-at': { type: 'string' },
      'end-at': { type: 'string' },
      limit: { type: 'string' },
      missed: { type: 'string' },
    },
    2,
  );
  if (v.help) return help(SCHEDULES_HELP);
  const action = positionals[0] === undefined ? null : choice('action', positionals[0], ACTIONS);
  const key = positionals[1];
  if (action !== null && action !== 'list' && !key) throw new UsageError(`${action} needs a schedule key`);
  const spec = action === 'upsert' ? specOf(key as string, v) : null;
  const folder = jobsFolder(v.jobs);
  const sluice = await openSluice(v, { poolMax: 2 });
  try {
    const print = (value: unknown, table: string) => {
      process.stdout.write(v.json ? `${terminalJson(value)}\n` : `${table}\n`);
      return 0;
    };
    switch (action) {
      case null: {
        const files = folder.explicit || folder.exists ? await sluice.schedules.files(requireJobsFolder(folder)) : [];
        const runtime = await sluice.schedules.list({ limit: 100 });
        return print(
          { schedules: files, runtime },
          `${filesTable(files)}\n\n${runtimeTable(runtime.schedules, runtime.next)}`,
        );
      }
      case 'list': {
        const page = await sluice.schedules.list({ after: v.after, limit: intFlag('max', v.max, 1, 500) ?? 100 });
        return print(page, runtimeTable(page.schedules, page.next));
      }
      case 'get':
        return await printSchedule(sluice, key as string, print);
      case 'upsert': {
        const result = await sluice.schedules.upsert(spec as ScheduleSpec);
        return print(result, runtimeTable([result.schedule], null));
      }
      case 'pause':
      case 'resume':
      case 'remove': {
        const changed = await sluice.schedules[action](key as string);
        if (!changed) {
          process.stderr.write(
            `schedule ${terminalJson(key)} ${action === 'remove' ? 'not found' : `not found or not ${action === 'pause' ? 'running' : 'paused'}`}\n`,
          );
          return 1;
        }
        return print(
          { key, [action === 'remove' ? 'removed' : 'paused']: action !== 'resume' },
          `${action}d ${terminalJson(key)}`,
        );
      }
    }
  } finally {
    await sluice.close();
  }
}

async function printSchedule(sluice: SluiceApi, key: string, print: (value: unknown, table: string) => number) {
  const schedule = await sluice.schedules.get(key);
  if (schedule === null) {
    process.stderr.write(`schedule ${terminalJson(key)} not found\n`);
    return 1;
  }
  const runs = await sluice.schedules.runs(key);
  const table = renderTable(
    ['run', 'tick', 'job', 'queue'],
    runs.map((r) => [String(r.seq), r.tickAt.toISOString(), r.jobId === null ? '-' : String(r.jobId), r.queue]),
  );
  return print({ schedule, runs }, `${runtimeTable([schedule], null)}\n\n${table}`);
}

function specOf(key: string, v: Record<string, string | boolean | undefined>): ScheduleSpec {
  const str = (name: string) => (typeof v[name] === 'string' ? (v[name] as string) : undefined);
  const date = (name: string) => {
    const s = str(name);
    if (s === undefined) return undefined;
    const d = new Date(s);
    if (Number.isNaN(d.getTime())) throw new UsageError(`--${name} must be an ISO time (got ${JSON.stringify(s)})`);
    return d;
  };
  let payload: unknown;
  if (str('payload') !== undefined) {
    try {
      payload = JSON.parse(str('payload') as string);
    } catch {
      throw new UsageError('--payload must be JSON');
    }
  }
  const job = str('job');
  if (job === undefined) throw new UsageError('upsert needs --job NAME');
  const missed = str('missed');
  return {
    key,
    job,
    queue: str('queue'),
    cron: str('cron'),
    tz: str('tz'),
    every: intFlag('every-ms', v['every-ms'], 1),
    payload,
    startAt: date('start-at'),
    endAt: date('end-at'),
    limit: intFlag('limit', v.limit, 1),
    missed: missed === undefined ? undefined : choice('missed', missed, ['skip', 'once', 'all'] as const),
  };
}

function filesTable(files: Awaited<ReturnType<SluiceApi['schedules']['files']>>): string {
  const rows = files.map((s) => [
    s.name,
    s.queue,
    `${s.schedule}${s.timezone ? ` (${s.timezone})` : ''}`,
    s.nextSlot?.toISOString() ?? '-',
    s.lastSlot?.toISOString() ?? '-',
    s.lastJobId === null ? '-' : `${s.lastJobId} ${s.lastJobState ?? 'gone'}`,
  ]);
  return renderTable(['name', 'queue', 'schedule', 'next slot', 'last slot', 'last job'], rows);
}

function runtimeTable(schedules: readonly Schedule[], next: string | null): string {
  const rows = schedules.map((s) => [
    s.key,
    s.job,
    s.queue,
    s.cron === null ? `every ${s.every} ms` : `${s.cron}${s.tz ? ` (${s.tz})` : ''}`,
    s.paused ? 'paused' : (s.nextRunAt?.toISOString() ?? 'over'),
    String(s.runs),
    s.lastJobId === null ? '-' : String(s.lastJobId),
  ]);
  const table = renderTable(['key', 'job', 'queue', 'schedule', 'next run', 'runs', 'last job'], rows);
  return next === null ? table : `${table}\n(more: --after ${next})`;
}
