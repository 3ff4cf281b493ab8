import { JobValidationError } from '../errors.ts';
import type { StoredTraceContext } from '../model/storedTraceContext.ts';
import { didYouMean } from '../options.ts';
import { backoffProblem } from './backoff.ts';
import { describe, type Fail } from './describeValue.ts';
import { flowControlOf, type JobFlowControl } from './flowControlOf.ts';
import { type GroupOf, groupOf } from './groupOf.ts';
import type { JobSpec, ParentRef } from './job.ts';
import { type JsonLoss, jsonLoss } from './jsonLoss.ts';
import { QUEUE_NAME } from './queueName.ts';
import { RESERVED_KEY_PREFIX } from './reservedKeyPrefix.ts';
import { packPayload } from './storedPayload.ts';

/** Job and queue names: what fits a log line, a file name and an index without quoting. */
export const NAME_PATTERN = /^[A-Za-z0-9_.:-]{1,128}$/;
export const KNOWN_FIELDS: ReadonlySet<string> = new Set([
  'name',
  'payload',
  'queue',
  'priority',
  'runAt',
  'delayMs',
  'maxRetries',
  'idempotencyKey',
  'backoff',
  'ref',
  'parents',
  'continueOnFailure',
  'group',
  'groupLimits',
  'debounce',
  'throttle',
]);
/** Parents one job may name: a fan-in wider than this is built with an intermediate job. */
export const MAX_PARENTS = 10_000;
const MAX_DELAY_MS = 10 * 365 * 24 * 3600 * 1000;
const MIN_RUN_AT = Date.UTC(1970, 0, 2);
const MAX_RUN_AT = Date.UTC(9999, 0, 1);

/** Half of a surrogate pair with no other half: not a character, and not storable as one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** A job that passed validation, in the form the INSERT needs. */
export interface NormalizedJob {
  readonly queue: string;
  readonly name: string;
  /** JSON text. */
  readonly payload: string;
  /** What the database holds for it: the JSON, or its packed form (storedPayload.ts). */
  readonly storedPayload: string;
  readonly priority: number;
  /** An absolute time, or null to use NOW(3) + delayMs on the DB clock. */
  readonly runAt: Date | null;
  readonly delayMs: number;
  readonly maxRetries: number | null;
  readonly idempotencyKey: string | null;
  /** JSON text, or null for the definition's backoff. */
  readonly backoff: string | null;
  /** Its place in a workflow (ref, parents), or null for a job outside any graph. */
  readonly graph: JobGraphSpec | null;
  /** Its group and the group limit it gives, or null without a group. */
  readonly group: GroupOf | null;
  /** Its group, group rate, debounce and throttle (all null for a job that names none). */
  readonly flow: JobFlowControl;
  /**
   * The trace context it is enqueued under, written with its row (a single enqueue under an
   * OpenTelemetry SDK: enqueueJob sets it); absent or null: none.
   */
  readonly trace?: StoredTraceContext | null;
}

/** A job's ref and parents as given, each parent checked for shape (resolved by planGraph). */
export interface JobGraphSpec {
  readonly ref: string | null;
  readonly parents: readonly { readonly job: string | number; readonly continueOnFailure: boolean }[];
}

export interface ValidationLimits {
  readonly maxPayloadBytes: number;
}

/**
 * Pure: checks one job and returns its normalized form, or throws JobValidationError naming
 * the job's index, the field and the reason. Fields are checked in a fixed order (the first bad
 * one is the one reported).
 */
export function validateJob(spec: JobSpec, index: number, limits: ValidationLimits): NormalizedJob {
  const fail = failFor(index);
  checkFields(spec, fail);
  const { name, queue } = namesOf(spec, fail);
  const payload = payloadOf(spec, limits, fail);
  const priority = priorityOf(spec, fail);
  const { runAt, delayMs } = dueOf(spec, fail);
  const maxRetries = maxRetriesOf(spec, fail);
  const idempotencyKey = idempotencyKeyOf(spec, fail);
  const backoff = backoffOf(spec, fail);
  const graph = graphOf(spec, fail);
  const group = groupOf(spec, fail);
  const flow = flowControlOf(spec, fail);
  return {
    backoff,
    queue,
    name,
    payload,
    storedPayload: packPayload(payload),
    priority,
    runAt,
    delayMs,
    maxRetries,
    idempotencyKey,
    graph,
    group,
    flow,
  };
}

/**
 * Throws JobValidationError naming job `index`. Returned anonymous on purpose: a named function
 * expression made on every call costs a name definition per call under a transpiler that keeps
 * names (tsx, which the repository's own scripts run), measurable on a single enqueue.
 */
function failFor(index: number): Fail {
  return (field, reason) => {
    throw new JobValidationError(index, field, reason);
  };
}

/** The job is an object of known fields only. */
function checkFields(spec: JobSpec, fail: Fail): void {
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) {
    fail('job', `must be an object (got ${describe(spec)})`);
  }
  for (const key of Object.keys(spec)) {
    if (!KNOWN_FIELDS.has(key))
      fail(key, `is not a job field${didYouMean(key, KNOWN_FIELDS) || ` (known: ${[...KNOWN_FIELDS].join(', ')})`}`);
  }
}

function namesOf(spec: JobSpec, fail: Fail): { name: string; queue: string } {
  if (typeof spec.name !== 'string' || !NAME_PATTERN.test(spec.name)) {
    fail('name', `must be 1–128 characters of [A-Za-z0-9_.:-] (got ${describe(spec.name)})`);
  }
  const queue = spec.queue ?? 'default';
  if (typeof queue !== 'string' || !QUEUE_NAME.test(queue)) {
    fail('queue', `must be 1–64 characters of [A-Za-z0-9_.:-] (got ${describe(spec.queue)})`);
  }
  return { name: spec.name, queue };
}

/**
 * The payload as JSON text, within the install's size limit, and plain JSON data: a value JSON
 * would leave out, change or refuse (jsonLoss) is refused at its path, not stored changed.
 */
function payloadOf(spec: JobSpec, limits: ValidationLimits, fail: Fail): string {
  const value = spec.payload === undefined ? {} : spec.payload;
  let payload: string | undefined;
  try {
    payload = JSON.stringify(value);
  } catch (error) {
    // A BigInt or a cycle: say where (a toJSON that throws has only its own message).
    const loss = lossOrNull(value);
    if (loss !== null) fail(loss.path, loss.reason);
    fail('payload', `is not JSON-serialisable: ${(error as Error).message}`);
  }
  if (payload === undefined) return fail('payload', `is not JSON-serialisable (got ${describe(spec.payload)})`);
  // UTF-8 needs at most 3 bytes per UTF-16 code unit: most payloads need no byte count at all.
  const bytes = payload.length * 3 <= limits.maxPayloadBytes ? 0 : Buffer.byteLength(payload, 'utf8');
  if (bytes > limits.maxPayloadBytes) {
    fail('payload', `is ${bytes} bytes as JSON, over the limit of ${limits.maxPayloadBytes}`);
  }
  const loss = jsonLoss(value, 'payload');
  if (loss !== null) fail(loss.path, loss.reason);
  return payload;
}

/** jsonLoss of a payload JSON.stringify threw on, or null if its walk throws as well. */
function lossOrNull(value: unknown): JsonLoss | null {
  try {
    return jsonLoss(value, 'payload');
  } catch {
    return null;
  }
}

function priorityOf(spec: JobSpec, fail: Fail): number {
  const priority = spec.priority ?? 0;
  if (!Number.isInteger(priority) || priority < -32768 || priority > 32767) {
    fail('priority', `must be an integer in [-32768, 32767] (got ${describe(spec.priority)})`);
  }
  return priority;
}

/** When the job is due: at an absolute runAt, or delayMs from now on the DB clock (runAt null); never both. */
function dueOf(spec: JobSpec, fail: Fail): { runAt: Date | null; delayMs: number } {
  if (spec.runAt !== undefined && spec.delayMs !== undefined) fail('runAt', 'and delayMs cannot both be set');
  let runAt: Date | null = null;
  if (spec.runAt !== undefined) {
    if (!(spec.runAt instanceof Date) || Number.isNaN(spec.runAt.getTime())) {
      fail('runAt', `must be a valid Date (got ${describe(spec.runAt)})`);
    }
    const time = spec.runAt.getTime();
    if (time < MIN_RUN_AT || time >= MAX_RUN_AT)
      fail('runAt', `must lie between 1970-01-02 and 9999-01-01 (got ${spec.runAt.toISOString()})`);
    runAt = spec.runAt;
  }
  const delayMs = spec.delayMs ?? 0;
  if (typeof delayMs !== 'number' || !Number.isFinite(delayMs) || delayMs < 0 || delayMs > MAX_DELAY_MS) {
    fail('delayMs', `must be a number of milliseconds in [0, ${MAX_DELAY_MS}] (got ${describe(spec.delayMs)})`);
  }
  return { runAt, delayMs: Math.round(delayMs) };
}

function maxRetriesOf(spec: JobSpec, fail: Fail): number | null {
  const maxRetries = spec.maxRetries ?? null;
  if (maxRetries !== null && !(Number.isInteger(maxRetries) && maxRetries >= 0 && maxRetries <= 1_000_000)) {
    fail('maxRetries', `must be an integer in [0, 1000000] (got ${describe(spec.maxRetries)})`);
  }
  return maxRetries;
}

/** The idempotency key, if any: one the server stores and compares as exactly the key given. */
function idempotencyKeyOf(spec: JobSpec, fail: Fail): string | null {
  const idempotencyKey = spec.idempotencyKey ?? null;
  if (
    idempotencyKey !== null &&
    (typeof idempotencyKey !== 'string' || idempotencyKey.length < 1 || idempotencyKey.length > 191)
  ) {
    fail('idempotencyKey', `must be a string of 1–191 characters (got ${describe(spec.idempotencyKey)})`);
  }
  if (typeof idempotencyKey === 'string' && LONE_SURROGATE.test(idempotencyKey)) {
    // A lone surrogate (what slicing emoji text in the middle leaves) is stored as U+FFFD: two
    // different keys would become one, and the key would never match the job it names.
    fail('idempotencyKey', 'must be well-formed Unicode (it holds a lone surrogate half)');
  }
  if (typeof idempotencyKey === 'string' && idempotencyKey.endsWith(' ')) {
    // MySQL and MariaDB compare VARCHAR keys ignoring trailing spaces (PAD SPACE collations):
    // 'invoice-42' and 'invoice-42 ' would be one key, and a distinct job dropped as a duplicate.
    fail('idempotencyKey', 'must not end with a space (the server compares keys ignoring trailing spaces)');
  }
  if (typeof idempotencyKey === 'string' && idempotencyKey.startsWith(RESERVED_KEY_PREFIX)) {
    fail('idempotencyKey', `must not start with "${RESERVED_KEY_PREFIX}" (reserved for sluice's own jobs)`);
  }
  return idempotencyKey;
}

/** The job's own backoff as JSON text, or null for its definition's. */
function backoffOf(spec: JobSpec, fail: Fail): string | null {
  if (spec.backoff === undefined) return null;
  const problem = backoffProblem(spec.backoff, false);
  if (problem) fail('backoff', problem);
  return JSON.stringify(spec.backoff);
}

/** The job's ref and parents, each of a valid shape; null when it names neither. */
function graphOf(spec: JobSpec, fail: Fail): JobGraphSpec | null {
  if (spec.ref === undefined && spec.parents === undefined && spec.continueOnFailure === undefined) return null;
  const ref = spec.ref ?? null;
  if (ref !== null && (typeof ref !== 'string' || ref.length < 1 || ref.length > 191)) {
    fail('ref', `must be a string of 1–191 characters (got ${describe(spec.ref)})`);
  }
  const all = spec.continueOnFailure ?? false;
  if (typeof all !== 'boolean') fail('continueOnFailure', `must be a boolean (got ${describe(all)})`);
  const given = spec.parents ?? [];
  if (!Array.isArray(given) || given.length > MAX_PARENTS) {
    fail('parents', `must be an array of at most ${MAX_PARENTS} parents (got ${describe(spec.parents)})`);
  }
  const parents = given.map((parent: ParentRef, i) => {
    const entry = typeof parent === 'object' && parent !== null ? parent : { job: parent };
    const job = entry.job;
    const isRef = typeof job === 'string' && job.length >= 1 && job.length <= 191;
    const isId = typeof job === 'number' && Number.isSafeInteger(job) && job > 0;
    if (!isRef && !isId) fail(`parents[${i}]`, `must be a ref (a string) or a job id (got ${describe(job)})`);
    const own = 'continueOnFailure' in entry ? entry.continueOnFailure : undefined;
    if (own !== undefined && typeof own !== 'boolean') {
      fail(`parents[${i}].continueOnFailure`, `must be a boolean (got ${describe(own)})`);
    }
    return { job, continueOnFailure: own ?? all };
  });
  return { ref, parents };
}
