import { describe, type Fail } from './describeValue.ts';
import type { JobSpec } from './job.ts';

/** The largest group concurrency limit (an INT UNSIGNED column). */
export const MAX_GROUP_LIMIT = 4_294_967_295;

/** A job's group as validated: its key, and the concurrency limit the job gives it (null: none given). */
export interface GroupOf {
  readonly key: string;
  readonly concurrency: number | null;
}

/**
 * The job's group and the limits it gives, checked: a group of 1–191 characters that the server
 * stores and compares as given (no trailing space, no lone surrogate), limits only with a group,
 * and a concurrency a whole number of at least 1. Null when the job names no group.
 */
export function groupOf(spec: JobSpec, fail: Fail): GroupOf | null {
  const group = spec.group;
  if (group === undefined) {
    if (spec.groupLimits !== undefined) fail('groupLimits', 'needs a group (the limits belong to the group)');
    return null;
  }
  if (typeof group !== 'string' || group.length < 1 || group.length > 191)
    fail('group', `must be a string of 1–191 characters (got ${describe(group)})`);
  if (group.endsWith(' '))
    fail('group', 'must not end with a space (the server compares groups ignoring trailing spaces)');
  if (/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(group))
    fail('group', 'must be well-formed Unicode (it holds a lone surrogate half)');
  const limits = spec.groupLimits;
  if (limits === undefined) return { key: group, concurrency: null };
  if (typeof limits !== 'object' || limits === null || Array.isArray(limits))
    fail('groupLimits', `must be an object such as { concurrency: 1 } (got ${describe(limits)})`);
  for (const key of Object.keys(limits))
    if (key !== 'concurrency' && key !== 'rate')
      fail(`groupLimits.${key}`, 'is not a group limit (known: concurrency, rate)');
  const concurrency = limits.concurrency ?? null;
  if (concurrency !== null && !(Number.isInteger(concurrency) && concurrency >= 1 && concurrency <= MAX_GROUP_LIMIT))
    fail('groupLimits.concurrency', `must be an integer in [1, ${MAX_GROUP_LIMIT}] (got ${describe(concurrency)})`);
  return { key: group, concurrency };
}
