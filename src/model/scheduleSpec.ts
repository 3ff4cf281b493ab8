import { OptionsError } from '../errors.ts';
import { optionKeys, rejectUnknownKeys } from '../options.ts';
import { describe } from './describeValue.ts';
import { jsonLoss } from './jsonLoss.ts';
import { assertQueueName } from './queueName.ts';
import { type CronFields, cronFieldsOf, type TickRule } from './scheduleTicks.ts';
import { NAME_PATTERN } from './validateJob.ts';
import { isTimeZone } from './zonedTime.ts';

/** What a schedule does with ticks that passed while nothing fired them (maintenance was down, or it was paused). */
export type MissedTicks = 'skip' | 'once' | 'all';

/** `sluice.schedules.upsert`'s argument: one run-time schedule, named by its key. */
export interface ScheduleSpec {
  /** The schedule's name, unique in the install: upserting it again changes it. 1–160 characters. */
  readonly key: string;
  /** The job each tick enqueues: its name, or a job definition (its name and queue). */
  readonly job: string | { readonly name: string; readonly queue?: string };
  /** The jobs' queue. @defaultValue the definition's, else 'default' */
  readonly queue?: string;
  /** A cron expression (5 fields, or 6 with seconds first). Exactly one of cron and every. */
  readonly cron?: string;
  /** A fixed interval in ms (at least 1,000), from startAt, else from when the schedule was made. */
  readonly every?: number;
  /** IANA zone the cron expression is read in. @defaultValue 'UTC' */
  readonly tz?: string;
  /** Every job's payload (JSON). @defaultValue {} */
  readonly payload?: unknown;
  /** No tick before this. @defaultValue none */
  readonly startAt?: Date;
  /** No tick after this; the schedule then stays, over, until removed. @defaultValue none */
  readonly endAt?: Date;
  /** At most this many jobs in all (the count survives upserts). @defaultValue none */
  readonly limit?: number;
  /**
   * Ticks that passed unfired — maintenance was down, the schedule paused: 'skip' fires none of them
   * but one within a minute of now, 'once' fires one job for the latest of them, 'all' fires each
   * (up to 1,000 per schedule per pass; the rest in the passes after). @defaultValue 'skip'
   */
  readonly missed?: MissedTicks;
}

export const SCHEDULE_SPEC_KEYS = optionKeys<ScheduleSpec>({
  key: true,
  job: true,
  queue: true,
  cron: true,
  every: true,
  tz: true,
  payload: true,
  startAt: true,
  endAt: true,
  limit: true,
  missed: true,
});

/** A schedule key: what fits an idempotency key's suffix and a terminal line without quoting. */
export const SCHEDULE_KEY = /^[A-Za-z0-9_.:@/+=-]{1,160}$/;
const MIN_EVERY_MS = 1_000;
const MAX_EVERY_MS = 366 * 86_400_000;
const MAX_PAYLOAD_BYTES_DEFAULT = 1_048_576;

/** A validated spec, in the form of its row. */
export interface NormalizedSchedule {
  readonly key: string;
  readonly jobName: string;
  readonly queue: string;
  readonly cron: string | null;
  readonly everyMs: number | null;
  readonly tz: string | null;
  readonly payload: string;
  readonly startAt: Date | null;
  readonly endAt: Date | null;
  readonly limit: number | null;
  readonly missed: MissedTicks;
}

/** Pure: checks a spec, throwing OptionsError naming the first bad field (`schedules.upsert.<field>`). */
export function normalizeSchedule(spec: ScheduleSpec, maxPayloadBytes = MAX_PAYLOAD_BYTES_DEFAULT): NormalizedSchedule {
  const family = 'sluice.schedules.upsert';
  if (typeof spec !== 'object' || spec === null)
    throw new OptionsError(family, `takes a schedule object (got ${describe(spec)})`);
  rejectUnknownKeys(family, spec, SCHEDULE_SPEC_KEYS);
  const field = (name: string) => `${family}: ${name}`;
  if (typeof spec.key !== 'string' || !SCHEDULE_KEY.test(spec.key))
    throw new OptionsError(field('key'), `must be 1–160 characters of [A-Za-z0-9_.:@/+=-] (got ${describe(spec.key)})`);
  const job = typeof spec.job === 'string' ? { name: spec.job } : spec.job;
  if (typeof job !== 'object' || job === null || typeof job.name !== 'string' || !NAME_PATTERN.test(job.name))
    throw new OptionsError(
      field('job'),
      `must be a job name (1–128 of [A-Za-z0-9_.:-]) or a job definition (got ${describe(spec.job)})`,
    );
  const queue = assertQueueName(field('queue'), spec.queue ?? (job as { queue?: string }).queue ?? 'default');
  if ((spec.cron === undefined) === (spec.every === undefined))
    throw new OptionsError(field('cron'), 'or every: give exactly one of them');
  let cron: string | null = null;
  if (spec.cron !== undefined) {
    const fields = typeof spec.cron === 'string' ? cronFieldsOf(spec.cron) : 'must be a string';
    if (typeof fields === 'string') throw new OptionsError(field('cron'), fields);
    cron = spec.cron.trim();
  }
  const everyMs = spec.every ?? null;
  if (everyMs !== null && (!Number.isInteger(everyMs) || everyMs < MIN_EVERY_MS || everyMs > MAX_EVERY_MS))
    throw new OptionsError(
      field('every'),
      `must be an integer of ms in [${MIN_EVERY_MS}, ${MAX_EVERY_MS}] (got ${describe(everyMs)})`,
    );
  const tz = spec.tz ?? null;
  if (tz !== null && (typeof tz !== 'string' || !isTimeZone(tz)))
    throw new OptionsError(field('tz'), `must be an IANA time zone name (got ${describe(tz)})`);
  if (tz !== null && cron === null)
    throw new OptionsError(field('tz'), 'applies to cron only; an every schedule counts ms');
  const payload = payloadOf(spec.payload ?? {}, field('payload'), maxPayloadBytes);
  const startAt = dateOf(spec.startAt, field('startAt'));
  const endAt = dateOf(spec.endAt, field('endAt'));
  if (startAt && endAt && endAt.getTime() < startAt.getTime())
    throw new OptionsError(field('endAt'), 'must not be before startAt');
  const limit = spec.limit ?? null;
  if (limit !== null && (!Number.isInteger(limit) || limit < 1 || limit > 4_294_967_295))
    throw new OptionsError(field('limit'), `must be a positive integer (got ${describe(limit)})`);
  const missed = spec.missed ?? 'skip';
  if (missed !== 'skip' && missed !== 'once' && missed !== 'all')
    throw new OptionsError(field('missed'), `must be 'skip', 'once' or 'all' (got ${describe(missed)})`);
  return { key: spec.key, jobName: job.name, queue, cron, everyMs, tz, payload, startAt, endAt, limit, missed };
}

function payloadOf(value: unknown, option: string, maxBytes: number): string {
  const loss = jsonLoss(value, 'payload');
  if (loss !== null) throw new OptionsError(option, `does not survive JSON: ${loss.path} ${loss.reason}`);
  const json = JSON.stringify(value);
  if (Buffer.byteLength(json) > maxBytes) throw new OptionsError(option, `is over maxPayloadBytes (${maxBytes})`);
  return json;
}

function dateOf(value: unknown, option: string): Date | null {
  if (value === undefined || value === null) return null;
  if (!(value instanceof Date) || Number.isNaN(value.getTime()))
    throw new OptionsError(option, `must be a valid Date (got ${describe(value)})`);
  return value;
}

/** Pure: the rule that makes a stored schedule's ticks. `createdMs` anchors an every schedule without startAt. */
export function tickRuleOf(row: {
  readonly cron: string | null;
  readonly everyMs: number | null;
  readonly tz: string | null;
  readonly startAt: Date | null;
  readonly createdAt: Date;
}): TickRule {
  if (row.cron !== null) {
    const fields = cronFieldsOf(row.cron);
    if (typeof fields === 'string') throw new OptionsError('cron', fields);
    return { kind: 'cron', fields: fields as CronFields, tz: row.tz ?? 'UTC' };
  }
  return { kind: 'every', everyMs: row.everyMs ?? 60_000, anchorMs: (row.startAt ?? row.createdAt).getTime() };
}
