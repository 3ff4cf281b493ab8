import { OptionsError } from '../errors.ts';
import type { JobInfo } from '../jobControl/getJob.ts';
import type { JobFilter } from '../jobControl/jobFilter.ts';
import type { JobState } from '../jobControl/jobState.ts';
import type { JobSummary } from '../jobControl/listJobs.ts';
import type { Sluice } from '../Sluice.ts';
import { jobsGraph } from './jobsGraph.ts';
import { openSluice } from './openSluice.ts';
import { COMMON_HELP, help, intFlag, parse } from './parse.ts';
import { renderTable } from './renderTable.ts';
import { terminalJson, terminalText } from './terminalText.ts';

export const JOBS_HELP = `sluice jobs: look up, list, cancel and expedite jobs (the same calls as sluice.jobs.*)

  sluice jobs get ID [--json]               one job wherever it is: state, holder, progress, result,
                                            its attempts' errors and its ctx.log lines
  sluice jobs list [filters] [--limit N] [--after CURSOR] [--json]
                                            a page of jobs (without --state: the live ones); the last
                                            line gives the --after for the next page
  sluice jobs graph --batch ID | --job ID [--limit N] [--after CURSOR] [--json]
                                            a page of a workflow's live jobs with their parents (and
                                            how each ended) and children; --job: the graph of its batch
  sluice jobs count [filters] [--max N] [--json]
                                            how many match, reading at most N index entries (default 10000)
  sluice jobs cancel ID[,ID…] | filters [--batch-size N]
                                            cancel live jobs: waiting/delayed/retrying ones at once,
                                            running ones within a heartbeat of their worker
  sluice jobs run-now ID[,ID…]              make delayed or retrying jobs due now
  sluice jobs retry-now ID[,ID…]            end failed jobs' backoff: due now
  sluice jobs wait ID [--timeout-ms N]      wait until it finishes; print its result (exit 1 if it
                                            died, was cancelled, or the wait timed out)

filters (combined with AND):
  --state S    waiting, delayed, held, retrying, running, completed, cancelled, dead
  --queue Q  --name N  --batch ID
  --from ISO  --to ISO   created (live jobs), finished (completed, cancelled) or died (dead) in [from, to)
${COMMON_HELP}`;

export async function jobsCommand(argv: string[]): Promise<number> {
  const { values: v, positionals } = parse(
    argv,
    {
      state: { type: 'string' },
      queue: { type: 'string' },
      name: { type: 'string' },
      batch: { type: 'string' },
      job: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      limit: { type: 'string' },
      after: { type: 'string' },
      max: { type: 'string' },
      'batch-size': { type: 'string' },
      'timeout-ms': { type: 'string' },
      json: { type: 'boolean' },
    },
    2,
  );
  const [action, target] = positionals;
  if (v.help) return help(JOBS_HELP);
  if (!action) return help(JOBS_HELP) + 2;
  const filter: JobFilter = {
    state: v.state as JobState | undefined,
    queue: v.queue,
    name: v.name,
    batchId: intFlag('batch', v.batch),
    from: dateFlag('from', v.from),
    to: dateFlag('to', v.to),
  };
  const sluice = await openSluice(v, { poolMax: 2 });
  try {
    switch (action) {
      case 'get': {
        const job = await sluice.jobs.get(idOf(target));
        if (!job) {
          process.stderr.write(`sluice jobs: no job ${target} (never enqueued, or finished without history)\n`);
          return 1;
        }
        process.stdout.write(`${v.json ? terminalJson({ job }) : describeJob(job)}\n`);
        return 0;
      }
      case 'list': {
        const page = await sluice.jobs.list(filter, { limit: intFlag('limit', v.limit), after: v.after });
        if (v.json) process.stdout.write(`${terminalJson(page)}\n`);
        else process.stdout.write(`${listTable(page.jobs)}\n${page.next ? `next page: --after ${page.next}\n` : ''}`);
        return 0;
      }
      case 'graph':
        return await jobsGraph(
          sluice,
          { batchId: filter.batchId, jobId: intFlag('job', v.job) },
          { limit: intFlag('limit', v.limit), after: v.after },
          v.json === true,
        );
      case 'count': {
        const { count, exact } = await sluice.jobs.count(filter, { max: intFlag('max', v.max) });
        process.stdout.write(v.json ? `${terminalJson({ count, exact })}\n` : `${count}${exact ? '' : '+'}\n`);
        return 0;
      }
      case 'cancel':
        return await cancel(sluice, target, filter, intFlag('batch-size', v['batch-size']));
      case 'run-now':
      case 'retry-now': {
        const ids = idsOf(target);
        const changed = await (action === 'run-now' ? sluice.jobs.runNow(ids) : sluice.jobs.retryNow(ids));
        process.stdout.write(`${terminalJson({ changed })}\n`);
        return 0;
      }
      case 'wait': {
        const result = await sluice.jobs.waitFor(idOf(target), { timeoutMs: intFlag('timeout-ms', v['timeout-ms']) });
        process.stdout.write(`${terminalJson({ result: result ?? null })}\n`);
        return 0;
      }
      default:
        process.stderr.write(
          `sluice jobs: unknown action "${action}" (get, list, graph, count, cancel, run-now, retry-now, wait)\n`,
        );
        return 2;
    }
  } finally {
    await sluice.close();
  }
}

async function cancel(sluice: Sluice, target: string | undefined, filter: JobFilter, batchSize?: number) {
  const filtered = Object.values(filter).some((x) => x !== undefined);
  if (target !== undefined && filtered) throw new OptionsError('cancel', 'takes ids or filters, not both');
  if (target === undefined && !filtered) {
    throw new OptionsError('cancel', 'needs job ids or at least one filter (--queue, --name, --batch, --state, …)');
  }
  const { cancelled } =
    target !== undefined
      ? await sluice.jobs.cancel(idsOf(target))
      : await sluice.jobs.cancel(filter, {
          batchSize,
          onProgress: (n) => process.stderr.write(`cancelled ${n}…\n`),
        });
  process.stdout.write(`${terminalJson({ cancelled })}\n`);
  return 0;
}

function idOf(text: string | undefined): number {
  const [id, ...more] = idsOf(text);
  if (more.length > 0) throw new OptionsError('ID', 'takes one job id');
  return id as number;
}

function idsOf(text: string | undefined): number[] {
  if (text === undefined) throw new OptionsError('ID', 'is missing (a job id, or ids separated by commas)');
  return text.split(',').map((part) => intFlag('ID', part.trim()) as number);
}

function dateFlag(name: string, value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const date = new Date(value);
  if (!Number.isFinite(date.getTime()))
    throw new OptionsError(`--${name}`, `must be a date (got ${JSON.stringify(value)})`);
  return date;
}

function listTable(jobs: readonly JobSummary[]): string {
  const rows = jobs.map((j) => [
    j.id,
    j.state,
    j.queue,
    j.name,
    j.priority,
    j.retryTimes,
    (j.finishedAt ?? j.runAt ?? j.createdAt).toISOString(),
    j.lockId ?? firstLine(j.error),
  ]);
  return renderTable(['id', 'state', 'queue', 'name', 'priority', 'failed', 'at', 'holder / last error'], rows);
}

/** A job as lines of `field  value`, then its last error's stack, its attempts' errors and its log lines. */
export function describeJob(job: JobInfo): string {
  const time = (d: Date | null) => d?.toISOString() ?? '-';
  const json = (value: unknown) => (value === undefined ? '-' : terminalJson(value));
  const releasedAt = job.workflow?.held?.runAt ?? job.groupHold?.runAt ?? null;
  const fields: [string, string | number][] = [
    ['state', job.state],
    ['queue', job.queue],
    ['name', job.name],
    ['priority', job.priority],
    ['attempts', `${job.retryTimes} failed, retry limit ${job.maxRetries ?? "the definition's"}`],
    ['run at', releasedAt ? `${time(releasedAt)} once released` : time(job.runAt)],
    ...workflowFields(job),
    [
      'held by',
      job.lock
        ? `${job.lock.workerId === null ? `claim ${job.lock.lockId}, its worker has no registry row` : `${job.lock.host} pid ${job.lock.pid} (${job.lock.workerId})`} since ${time(job.lock.lockedAt)}`
        : '-',
    ],
    ['progress', job.progress ? `${json(job.progress.value)} at ${time(job.progress.at)}` : '-'],
    ['result', json(job.result)],
    ['batch', job.batchId ?? '-'],
    ['key', job.idempotencyKey ?? '-'],
    ['created', time(job.createdAt)],
    ['started', time(job.startedAt)],
    ['finished', time(job.finishedAt)],
    ...(job.redrivenAs ? [['re-driven as', job.redrivenAs] as [string, number]] : []),
    ...(job.groupHold
      ? [
          [
            'held back',
            `by its group ${job.groupHold.group}: ${job.groupHold.active} slot(s) taken, ${job.groupHold.limit === null ? 'no limit' : `${job.groupHold.fair ? 'a fair-share window' : 'a limit'} of ${job.groupHold.limit}`}`,
          ] as [string, string],
        ]
      : []),
    ...(job.queueHold
      ? [
          [
            'held back',
            `by its queue: ${job.queueHold.reason}${job.queueHold.until ? ` until ${time(job.queueHold.until)}` : ''}`,
          ] as [string, string],
        ]
      : []),
    ...(job.flowHold
      ? [
          [
            'start set by',
            job.flowHold.reason === 'debounced'
              ? `debounce: key ${job.flowHold.debounceKey}, until ${time(job.flowHold.until)}`
              : `${job.flowHold.reason === 'group-rate' ? 'rate limited' : 'paused'}: group ${job.flowHold.group}, reserved start ${time(job.flowHold.until)}`,
          ] as [string, string],
        ]
      : []),
    ['payload', job.payloadRefused ?? json(job.payload)],
  ];
  const width = Math.max(...fields.map(([name]) => name.length));
  const lines = [`job ${job.id}`, ...fields.map(([name, value]) => `  ${name.padEnd(width)}  ${value}`)];
  if (job.lastError) lines.push('  last error', ...job.lastError.split('\n').map((l) => `    ${l}`));
  if (job.errors.length > 0) {
    lines.push('  attempt errors (newest first; stacks with --json)');
    for (const e of job.errors) {
      const code = e.code === null ? '' : `[${e.code}] `;
      lines.push(`    #${e.attempt}  ${time(e.failedAt)}  ${e.workerId ?? '-'}  ${code}${firstLine(e.message)}`);
    }
  }
  if (job.logs.length > 0 || job.logsDropped > 0) {
    lines.push('  log');
    for (const l of job.logs) {
      const fields = l.fields === undefined ? '' : `  ${terminalJson(l.fields)}`;
      lines.push(`    ${time(l.at)}  #${l.attempt}  ${l.message}${fields}`);
    }
    if (job.logsDropped > 0) lines.push(`    … ${job.logsDropped} more line(s) dropped`);
  }
  return lines.map(terminalText).join('\n');
}

/** A workflow job's waits, parents (with how each ended) and children: ids, the first 20, then a count. */
function workflowFields(job: JobInfo): [string, string][] {
  const flow = job.workflow;
  if (flow === null) return [];
  const list = (items: readonly string[]) =>
    items.length === 0
      ? '-'
      : `${items.slice(0, 20).join(', ')}${items.length > 20 ? `, … (${items.length} in all)` : ''}`;
  const fields: [string, string][] = [];
  if (flow.held) fields.push(['waiting for', `${flow.held.waitingFor} parent(s) to finish`]);
  fields.push(['parents', list(flow.parents.map((p) => `${p.id} ${p.outcome}`))]);
  fields.push(['children', list(flow.children.map((c) => String(c.id)))]);
  return fields;
}

function firstLine(text: string | null): string {
  const line = (text ?? '').split('\n')[0] ?? '';
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}
