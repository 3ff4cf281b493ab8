import { OptionsError } from '../errors.ts';
import { integerIn, optionKeys, rejectUnknownKeys } from '../options.ts';
import { JOB_STATES, type JobState } from './jobState.ts';

/**
 * Which jobs a listing, a count or a cancel applies to. All fields are optional and combine with
 * AND. Without `state` it is every live job (waiting, delayed, retrying, running); finished jobs
 * are listed by their state (completed, cancelled, dead).
 */
export interface JobFilter {
  /** One state: waiting, delayed, held, retrying, running (live), completed, cancelled or dead. @defaultValue every live state */
  readonly state?: JobState;
  /** Jobs of this queue. */
  readonly queue?: string;
  /** Jobs of this job name. */
  readonly name?: string;
  /** Jobs of this batch (`enqueueBatch`'s `batchId`). */
  readonly batchId?: number;
  /**
   * A time range, [from, to): on when the job was created (live jobs), finished (completed,
   * cancelled) or died (dead).
   */
  readonly from?: Date;
  /** The end of the time range `from` opens (excluded). */
  readonly to?: Date;
}

export const JOB_FILTER_KEYS = optionKeys<JobFilter>({
  state: true,
  queue: true,
  name: true,
  batchId: true,
  from: true,
  to: true,
});

/** Pure: the filter checked (OptionsError naming the field otherwise), with undefined fields dropped. */
export function validateJobFilter(filter: JobFilter = {}): JobFilter {
  rejectUnknownKeys('a job filter', filter, JOB_FILTER_KEYS);
  const { state, queue, name, batchId, from, to } = filter;
  if (state !== undefined && !JOB_STATES.includes(state)) {
    throw new OptionsError('state', `must be one of ${JOB_STATES.join(', ')} (got ${JSON.stringify(state)})`);
  }
  for (const [field, value] of [
    ['queue', queue],
    ['name', name],
  ] as const) {
    if (value !== undefined && (typeof value !== 'string' || value === '')) {
      throw new OptionsError(field, `must be a non-empty string (got ${JSON.stringify(value)})`);
    }
  }
  if (batchId !== undefined) integerIn('batchId', batchId, 1);
  for (const [field, value] of [
    ['from', from],
    ['to', to],
  ] as const) {
    if (value !== undefined && !(value instanceof Date && Number.isFinite(value.getTime()))) {
      throw new OptionsError(field, 'must be a valid Date');
    }
  }
  return Object.fromEntries(Object.entries(filter).filter(([, v]) => v !== undefined)) as JobFilter;
}
