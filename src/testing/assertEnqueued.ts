import { AssertionError } from 'node:assert';
import { integerIn } from '../options.ts';
import type { Sluice } from '../Sluice.ts';
import {
  type AssertEnqueuedOptions,
  checkFilter,
  checkOptions,
  type EnqueuedFilter,
  type EnqueuedJob,
  type EnqueuedOptions,
  OPTION_KEYS,
  readEnqueued,
} from './enqueuedJobs.ts';
import { payloadMismatches, shown } from './payloadMismatches.ts';

/** Jobs a failure message lists, closest first. */
const SHOWN_JOBS = 10;

/**
 * Throws an AssertionError unless a live job of `sluice`'s install matches `filter` (name, queue,
 * a part of the payload) — or exactly `count` do. The message lists the jobs that came closest and
 * how each differs (`payload.to: expected "a@x", got "b@x"`); `actual` and `expected` are set for a
 * test runner's diff. Returns the matching jobs. `{ trx }` looks inside the caller's transaction.
 */
export async function assertEnqueued(
  sluice: Sluice,
  filter: EnqueuedFilter,
  options: AssertEnqueuedOptions = {},
): Promise<EnqueuedJob[]> {
  checkFilter('assertEnqueued', filter);
  const limit = checkOptions('assertEnqueued', options, [...OPTION_KEYS, 'count']);
  const count = options.count === undefined ? undefined : integerIn('count', options.count, 0);
  const { jobs, more } = await readEnqueued(sluice, filter, options.trx, limit);
  const matching = jobs.filter((job) => payloadMismatches(filter.payload, job.payload).length === 0);
  if (count === undefined ? matching.length > 0 : matching.length === count && !more) return matching;
  if (count !== undefined && matching.length > 0) {
    throw new AssertionError({
      message: `assertEnqueued: expected ${count} live job(s) matching ${shown(filter)}, found ${matching.length}${more ? ` among the first ${limit} read` : ''}:\n${matching
        .slice(0, SHOWN_JOBS)
        .map((job) => `  ${described(job)}`)
        .join('\n')}`,
      actual: matching.length,
      expected: count,
      operator: 'assertEnqueued',
    });
  }
  const nearby = jobs.length > 0 ? { jobs, more } : await readEnqueued(sluice, {}, options.trx, SHOWN_JOBS);
  const closest = nearby.jobs
    .map((job) => ({ job, why: differences(filter, job) }))
    .sort((a, b) => a.why.length - b.why.length)
    .slice(0, SHOWN_JOBS);
  const what = jobs.length > 0 ? 'of its name and queue' : 'at all';
  const listing =
    closest.length === 0
      ? ' none'
      : `\n${closest.map(({ job, why }) => `  ${described(job)}: ${why.join('; ')}`).join('\n')}${nearby.more || nearby.jobs.length > closest.length ? '\n  … and more' : ''}`;
  const best = closest[0]?.job;
  throw new AssertionError({
    message: `assertEnqueued: no live job matches ${shown(filter)}; the live jobs ${what}:${listing}`,
    actual: best ? { name: best.name, queue: best.queue, payload: best.payload } : undefined,
    expected: best
      ? {
          name: filter.name ?? best.name,
          queue: filter.queue ?? best.queue,
          payload: filter.payload === undefined ? best.payload : overlay(filter.payload, best.payload),
        }
      : filter,
    operator: 'assertEnqueued',
  });
}

/**
 * Throws an AssertionError if a live job of `sluice`'s install matches `filter`, listing the ones
 * that do. `{ trx }` looks inside the caller's transaction.
 */
export async function refuteEnqueued(
  sluice: Sluice,
  filter: EnqueuedFilter,
  options: EnqueuedOptions = {},
): Promise<void> {
  checkFilter('refuteEnqueued', filter);
  const limit = checkOptions('refuteEnqueued', options, OPTION_KEYS);
  const { jobs } = await readEnqueued(sluice, filter, options.trx, limit);
  const matching = jobs.filter((job) => payloadMismatches(filter.payload, job.payload).length === 0);
  if (matching.length === 0) return;
  throw new AssertionError({
    message: `refuteEnqueued: expected no live job matching ${shown(filter)}, found ${matching.length}:\n${matching
      .slice(0, SHOWN_JOBS)
      .map((job) => `  ${described(job)}`)
      .join('\n')}`,
    actual: matching.length,
    expected: 0,
    operator: 'refuteEnqueued',
  });
}

/** `#12 send-email on default {"to":"b@x"}` */
function described(job: EnqueuedJob): string {
  return `#${job.id} ${job.name} on ${job.queue} ${job.payloadError ?? shown(job.payload)}`;
}

function differences(filter: EnqueuedFilter, job: EnqueuedJob): string[] {
  const why: string[] = [];
  if (filter.name !== undefined && job.name !== filter.name)
    why.push(`name: expected ${shown(filter.name)}, got ${shown(job.name)}`);
  if (filter.queue !== undefined && job.queue !== filter.queue)
    why.push(`queue: expected ${shown(filter.queue)}, got ${shown(job.queue)}`);
  if (filter.payload !== undefined) why.push(...payloadMismatches(filter.payload, job.payload));
  return why;
}

/** The actual payload with the expected part laid over it: what would have matched, for a diff. */
function overlay(expected: unknown, actual: unknown): unknown {
  if (!isPlainObject(expected) || !isPlainObject(actual)) return expected;
  const out: Record<string, unknown> = { ...actual };
  for (const [key, value] of Object.entries(expected)) out[key] = overlay(value, actual[key]);
  return out;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
