import { DashboardRequestError } from '../errors.ts';
import type { JobFilter } from '../jobControl/jobFilter.ts';
import { JOB_STATES, type JobState } from '../jobControl/jobState.ts';

/**
 * A job filter from a query or a form (state, queue, name, batch, from, to; times as UTC
 * datetime-local values), or DashboardRequestError naming the field that is wrong.
 */
export function jobFilterOf(params: URLSearchParams): JobFilter {
  const get = (field: string) => params.get(field)?.trim() || undefined;
  const state = get('state');
  if (state !== undefined && !(JOB_STATES as readonly string[]).includes(state))
    throw new DashboardRequestError(
      400,
      'state',
      `must be one of ${JOB_STATES.join(', ')} (got ${JSON.stringify(state)})`,
    );
  const batch = get('batch');
  if (batch !== undefined && !/^\d{1,16}$/.test(batch))
    throw new DashboardRequestError(400, 'batch', `must be a batch id (got ${JSON.stringify(batch)})`);
  const filter = {
    state: state as JobState | undefined,
    queue: get('queue'),
    name: get('name'),
    batchId: batch === undefined ? undefined : Number(batch),
    from: dateOf('from', get('from')),
    to: dateOf('to', get('to')),
  };
  return Object.fromEntries(Object.entries(filter).filter(([, v]) => v !== undefined)) as JobFilter;
}

/** Pure: the filter's fields as a form carries them (what jobFilterOf reads back). */
export function filterFields(filter: JobFilter): Record<string, string> {
  const out: Record<string, string> = {};
  if (filter.state) out.state = filter.state;
  if (filter.queue) out.queue = filter.queue;
  if (filter.name) out.name = filter.name;
  if (filter.batchId !== undefined) out.batch = String(filter.batchId);
  if (filter.from) out.from = filter.from.toISOString();
  if (filter.to) out.to = filter.to.toISOString();
  return out;
}

/** Pure: the filter in words, for a confirmation ("state dead, queue mail"; "every live job"). */
export function filterWords(filter: JobFilter): string {
  const parts = [
    filter.state ? `state ${filter.state}` : 'live',
    filter.queue && `queue ${filter.queue}`,
    filter.name && `name ${filter.name}`,
    filter.batchId !== undefined && `batch ${filter.batchId}`,
    filter.from && `from ${filter.from.toISOString()}`,
    filter.to && `to ${filter.to.toISOString()}`,
  ];
  return parts.filter(Boolean).join(', ');
}

/** A datetime-local value ("2026-11-24T01:02:03"), read as UTC. */
function dateOf(field: string, text: string | undefined): Date | undefined {
  if (text === undefined) return undefined;
  const date = new Date(/[zZ]|[+-]\d\d:\d\d$/.test(text) ? text : `${text}Z`);
  if (!/^\d{4}-\d\d-\d\d/.test(text) || !Number.isFinite(date.getTime()))
    throw new DashboardRequestError(
      400,
      field,
      `must be a date and time like 2026-11-24T01:02:03 (got ${JSON.stringify(text)})`,
    );
  return date;
}
