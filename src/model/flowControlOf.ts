import type { JobSpec } from './job.ts';

/** A job's group and the flow control it asked for at enqueue, checked (validateJob). */
export interface JobFlowControl {
  /** The job's group (JobSpec.group), or null. */
  readonly group: string | null;
  /** The group's rate the job sets (JobSpec.groupLimits.rate), or null for the group's current one. */
  readonly groupRate: { readonly limit: number; readonly intervalMs: number } | null;
  readonly debounce: { readonly key: string; readonly delayMs: number; readonly maxWaitMs: number | null } | null;
  readonly throttle: { readonly key: string; readonly windowMs: number } | null;
}

/** The longest debounce delay, debounce wait and throttle window: 30 days (ms). */
export const MAX_FLOW_WINDOW_MS = 30 * 86_400_000;
/** The largest rate an INT UNSIGNED column holds. */
const MAX_RATE = 4_294_967_295;
/** A throttle window is an idempotency key under this prefix (src/idempotency/reserveThrottleKeys.ts). */
export const THROTTLE_KEY_PREFIX = 'sluice:throttle:';
const MAX_KEY = 191;
const MAX_THROTTLE_KEY = MAX_KEY - THROTTLE_KEY_PREFIX.length;

const NONE: JobFlowControl = { group: null, groupRate: null, debounce: null, throttle: null };

/**
 * Pure: a job's group, groupLimits, debounce and throttle checked; `fail(field, reason)` throws the
 * JobValidationError naming the job. A job that names none of them gets NONE (no allocation).
 */
export function flowControlOf(spec: JobSpec, fail: (field: string, reason: string) => never): JobFlowControl {
  if (
    spec.group === undefined &&
    spec.groupLimits === undefined &&
    spec.debounce === undefined &&
    spec.throttle === undefined
  )
    return NONE;
  const group = spec.group ?? null;
  if (group !== null && !isKey(group, MAX_KEY))
    fail('group', `must be a string of 1–191 characters (got ${show(group)})`);
  const groupRate = groupRateOf(spec, fail);
  if (groupRate !== null && group === null) fail('groupLimits', 'needs a group (the key the limit counts by)');
  const debounce = debounceOf(spec, fail);
  const throttle = throttleOf(spec, fail);
  if (debounce !== null && throttle !== null) fail('debounce', 'and throttle cannot both be set');
  if ((debounce !== null || throttle !== null) && spec.idempotencyKey !== undefined)
    fail(
      debounce !== null ? 'debounce' : 'throttle',
      'and idempotencyKey cannot both be set (each decides which job is kept)',
    );
  if (debounce !== null && (spec.runAt !== undefined || spec.delayMs !== undefined))
    fail('debounce', 'sets the run time itself: give no runAt or delayMs');
  return { group, groupRate, debounce, throttle };
}

function groupRateOf(spec: JobSpec, fail: (field: string, reason: string) => never): JobFlowControl['groupRate'] {
  const limits = spec.groupLimits;
  if (limits === undefined) return null;
  if (typeof limits !== 'object' || limits === null) fail('groupLimits', `must be an object (got ${show(limits)})`);
  for (const key of Object.keys(limits))
    if (key !== 'concurrency' && key !== 'rate')
      fail(`groupLimits.${key}`, 'is not a group limit (known: concurrency, rate)');
  const rate = limits.rate;
  if (rate === undefined) return null;
  if (typeof rate !== 'object' || rate === null) fail('groupLimits.rate', 'must be { limit, intervalMs }');
  if (!isInt(rate.limit, 1, MAX_RATE))
    fail('groupLimits.rate.limit', `must be a whole number ≥ 1 (got ${show(rate.limit)})`);
  if (!isInt(rate.intervalMs, 1, MAX_FLOW_WINDOW_MS))
    fail(
      'groupLimits.rate.intervalMs',
      `must be whole milliseconds in [1, ${MAX_FLOW_WINDOW_MS}] (got ${show(rate.intervalMs)})`,
    );
  return { limit: rate.limit, intervalMs: rate.intervalMs };
}

function debounceOf(spec: JobSpec, fail: (field: string, reason: string) => never): JobFlowControl['debounce'] {
  const d = spec.debounce;
  if (d === undefined) return null;
  if (typeof d !== 'object' || d === null) fail('debounce', 'must be { key, delayMs, maxWaitMs? }');
  if (!isKey(d.key, MAX_KEY)) fail('debounce.key', `must be a string of 1–191 characters (got ${show(d.key)})`);
  if (!isInt(d.delayMs, 0, MAX_FLOW_WINDOW_MS))
    fail('debounce.delayMs', `must be whole milliseconds in [0, ${MAX_FLOW_WINDOW_MS}] (got ${show(d.delayMs)})`);
  const maxWaitMs = d.maxWaitMs ?? null;
  if (maxWaitMs !== null && !isInt(maxWaitMs, d.delayMs, MAX_FLOW_WINDOW_MS))
    fail(
      'debounce.maxWaitMs',
      `must be whole milliseconds in [delayMs, ${MAX_FLOW_WINDOW_MS}] (got ${show(maxWaitMs)})`,
    );
  return { key: d.key, delayMs: d.delayMs, maxWaitMs };
}

function throttleOf(spec: JobSpec, fail: (field: string, reason: string) => never): JobFlowControl['throttle'] {
  const t = spec.throttle;
  if (t === undefined) return null;
  if (typeof t !== 'object' || t === null) fail('throttle', 'must be { key, windowMs }');
  if (!isKey(t.key, MAX_THROTTLE_KEY))
    fail('throttle.key', `must be a string of 1–${MAX_THROTTLE_KEY} characters (got ${show(t.key)})`);
  if (!isInt(t.windowMs, 1, MAX_FLOW_WINDOW_MS))
    fail('throttle.windowMs', `must be whole milliseconds in [1, ${MAX_FLOW_WINDOW_MS}] (got ${show(t.windowMs)})`);
  return { key: t.key, windowMs: t.windowMs };
}

/** A key the server stores and compares exactly: 1–max characters, no trailing space (PAD SPACE collations). */
function isKey(value: unknown, max: number): value is string {
  return typeof value === 'string' && value.length >= 1 && value.length <= max && !value.endsWith(' ');
}

function isInt(value: unknown, min: number, max: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}

function show(value: unknown): string {
  return typeof value === 'string'
    ? JSON.stringify(value.slice(0, 40))
    : typeof value === 'number'
      ? String(value)
      : typeof value;
}
