import { JobDefinitionError } from '../errors.ts';
import { didYouMean, rejectUnknownKeys } from '../options.ts';
import { backoffProblem } from './backoff.ts';
import type { Backoff, GroupLimitsSpec, JobContext, JobSpec } from './job.ts';
import { scheduleProblem } from './parseSchedule.ts';
import { KNOWN_FIELDS, NAME_PATTERN } from './validateJob.ts';

/** What a job's success and failure promise. See README "Delivery modes". */
export type Delivery = 'at-least-once' | 'exactly-once' | 'at-most-once';

export interface JobDefinition<P = unknown> {
  /** The job type's name, which jobs carry (`JobSpec.name`): 1–128 of `A-Z a-z 0-9 _ . : -`, unique among a worker's definitions. */
  readonly name: string;
  /** Queue used when a job of this name is enqueued without one. Informational for the worker. */
  readonly queue?: string;
  /** Failed attempts retried before the job dies (moves to the dead jobs); a job's own `maxRetries` wins. @defaultValue the worker's `maxRetries` (3) */
  readonly maxRetries?: number;
  /** Aborts `ctx.signal` and fails the attempt after this long. */
  readonly timeoutMs?: number;
  /** The wait before each retry: `{ type: 'exponential', delayMs, maxDelayMs?, jitter? }`, `{ type: 'fixed', delayMs }` or a function of the attempt and the error; a job's own wins. @defaultValue the worker's `backoff` */
  readonly backoff?: Backoff;
  /** What a success and a failure promise: `at-least-once`, `exactly-once` (the handler's writes through `ctx.trx` commit with the job's removal) or `at-most-once` (docs/jobs.md "Delivery modes"). @defaultValue `'at-least-once'` */
  readonly delivery?: Delivery;
  /**
   * Recurring: a node-cron expression (seconds field allowed). The maintenance process enqueues
   * one job per tick, fleet-wide, with payload `{ scheduledAt }`.
   */
  readonly schedule?: string;
  /** IANA time zone for `schedule`. @defaultValue the process's */
  readonly timezone?: string;
  /**
   * The group of this definition's jobs, or a function of the payload that names it, evaluated by
   * `jobOf` (and `sluice.enqueue(definition, payload)`) at enqueue. A job's own `group` wins.
   */
  readonly group?: string | ((payload: P) => string);
  /** Limits for the group of this definition's jobs (see JobSpec.groupLimits); a job's own win. */
  readonly groupLimits?: GroupLimitsSpec;
  /**
   * Debounce every job of this definition (see JobSpec.debounce); its key a string or a function of
   * the payload, evaluated at enqueue as `group` is. A job's own `debounce` wins.
   */
  readonly debounce?: KeyedBy<P, { readonly delayMs: number; readonly maxWaitMs?: number }>;
  /** Throttle every job of this definition (see JobSpec.throttle); its key as debounce's. A job's own wins. */
  readonly throttle?: KeyedBy<P, { readonly windowMs: number }>;
  /** Runs one attempt: resolves (its value is the job's result) or throws (a failed attempt, retried with `backoff`); `ctx` is the job's context (docs/jobs.md "The handler's context"). */
  handle(payload: P, ctx: JobContext<P>): Promise<unknown> | unknown;
}

/** What `fields` may hold: a JobSpec's fields but its name and payload. */
export const JOB_FIELDS: readonly string[] = [...KNOWN_FIELDS].filter((f) => f !== 'name' && f !== 'payload');

/** A definition's fields, for refusing a misspelt one (`retries`) that would otherwise be ignored. */
const DEFINITION_FIELDS = [
  'name',
  'queue',
  'maxRetries',
  'timeoutMs',
  'backoff',
  'delivery',
  'schedule',
  'timezone',
  'group',
  'groupLimits',
  'debounce',
  'throttle',
  'handle',
] as const satisfies readonly (keyof JobDefinition)[];

/** A definition's debounce or throttle: its options, with a key given or made from the payload. */
export type KeyedBy<P, O> = O & { readonly key: string | ((payload: P) => string) };

/** Declares a job type. Checks its shape now, so a bad definition fails at load, not at the first job. */
export function defineJob<P = unknown>(definition: JobDefinition<P>): JobDefinition<P> {
  const where = `defineJob(${JSON.stringify(definition?.name)})`;
  if (typeof definition !== 'object' || definition === null)
    throw new JobDefinitionError('defineJob', 'expects an object');
  if (typeof definition.name !== 'string' || !NAME_PATTERN.test(definition.name)) {
    throw new JobDefinitionError(where, `name must match ${NAME_PATTERN}`);
  }
  for (const key of Object.keys(definition)) {
    if (!(DEFINITION_FIELDS as readonly string[]).includes(key))
      throw new JobDefinitionError(
        where,
        `${key} is not a field of a job definition${didYouMean(key, DEFINITION_FIELDS)}`,
      );
  }
  if (typeof definition.handle !== 'function') throw new JobDefinitionError(where, 'handle must be a function');
  if (definition.maxRetries !== undefined && !(Number.isInteger(definition.maxRetries) && definition.maxRetries >= 0)) {
    throw new JobDefinitionError(where, 'maxRetries must be a non-negative integer');
  }
  if (definition.timeoutMs !== undefined && !(Number.isFinite(definition.timeoutMs) && definition.timeoutMs > 0)) {
    throw new JobDefinitionError(where, 'timeoutMs must be a positive number');
  }
  if (definition.backoff !== undefined) {
    const problem = backoffProblem(definition.backoff, true);
    if (problem) throw new JobDefinitionError(where, `backoff ${problem}`);
  }
  if (definition.schedule !== undefined || definition.timezone !== undefined) {
    const problem = scheduleProblem(definition.schedule, definition.timezone);
    if (problem) throw new JobDefinitionError(where, problem);
  }
  if (definition.group !== undefined && typeof definition.group !== 'string' && typeof definition.group !== 'function')
    throw new JobDefinitionError(where, 'group must be a string or a function of the payload');
  for (const field of ['debounce', 'throttle'] as const) {
    const keyed = definition[field];
    if (keyed === undefined) continue;
    if (typeof keyed !== 'object' || keyed === null || !['string', 'function'].includes(typeof keyed.key))
      throw new JobDefinitionError(where, `${field}.key must be a string or a function of the payload`);
  }
  if (
    definition.delivery !== undefined &&
    !['at-least-once', 'exactly-once', 'at-most-once'].includes(definition.delivery)
  ) {
    throw new JobDefinitionError(
      where,
      `delivery must be 'at-least-once', 'exactly-once' or 'at-most-once' (got ${JSON.stringify(definition.delivery)})`,
    );
  }
  return Object.freeze({ ...definition });
}

/** The payload type a job definition's handler takes. */
export type PayloadOf<D> = D extends JobDefinition<infer P> ? P : never;

/** A job's fields besides its name and payload (queue, priority, runAt, …): see JobSpec. */
export type JobFields = Omit<JobSpec, 'name' | 'payload'>;

/**
 * A job for `definition`, typed against its handler: a payload the handler does not take is a
 * compile error. The definition's `queue` applies unless `fields` names one.
 *
 * ```ts
 * import { jobOf } from 'sluice';
 *
 * await sluice.enqueueBatch(users.map((u) => jobOf(sendEmail, { to: u.email }, { priority: 5 })));
 * ```
 */
export function jobOf<D extends JobDefinition<any>>(definition: D, payload: PayloadOf<D>, fields?: JobFields): JobSpec {
  rejectUnknownKeys('jobOf(definition, payload, fields)', fields, JOB_FIELDS);
  const queue = fields?.queue ?? definition.queue;
  const group =
    fields?.group ?? (typeof definition.group === 'function' ? definition.group(payload) : definition.group);
  const groupLimits = fields?.groupLimits ?? definition.groupLimits;
  const debounce = fields?.debounce ?? keyOf(definition.debounce, payload);
  const throttle = fields?.throttle ?? keyOf(definition.throttle, payload);
  return {
    ...fields,
    ...(queue === undefined ? {} : { queue }),
    ...(group === undefined ? {} : { group }),
    ...(groupLimits === undefined ? {} : { groupLimits }),
    ...(debounce === undefined ? {} : { debounce }),
    ...(throttle === undefined ? {} : { throttle }),
    name: definition.name,
    payload,
  };
}

/** A definition's debounce or throttle for one payload: its key function called, if it has one. */
function keyOf<P, O extends object>(keyed: KeyedBy<P, O> | undefined, payload: P): (O & { key: string }) | undefined {
  if (keyed === undefined) return undefined;
  return { ...keyed, key: typeof keyed.key === 'function' ? keyed.key(payload) : keyed.key };
}

/** True for a job definition (it has a handler), false for a JobSpec. */
export function isJobDefinition(value: unknown): value is JobDefinition<any> {
  return typeof value === 'object' && value !== null && typeof (value as { handle?: unknown }).handle === 'function';
}
