import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { integerIn, optionKeys } from '../options.ts';

/** sluice.deadJobs.groups()'s options. */
export interface FailureGroupOptions {
  /** How many of the newest dead jobs are read and grouped (1–10,000). @defaultValue 2,000 */
  limit?: number;
}

export const FAILURE_GROUP_KEYS = optionKeys<FailureGroupOptions>({ limit: true });

/** Most characters of an error's first line read per dead job, and kept in a shape. */
const HEAD_CHARS = 300;

/**
 * Params: ?1 limit. The newest dead jobs, re-driven ones included (they are skipped here, so the
 * rows read are exactly the limit whatever was re-driven), backwards along ix_failed; of each
 * error only its first line, cut.
 */
const sqlNewest = (t: Tables) => `
SELECT id, queue, name, redriven_at IS NULL AS live,
       SUBSTRING_INDEX(LEFT(COALESCE(last_error, ''), ${HEAD_CHARS}), '\\n', 1) AS head,
       TIMESTAMPDIFF(MICROSECOND, failed_at, NOW(3)) DIV 1000 AS ago_ms
FROM ${t.deadJobs} FORCE INDEX (ix_failed)
ORDER BY failed_at DESC
LIMIT ?`;

/** Dead jobs of one queue and name whose errors have the same shape. */
export interface FailureGroup {
  readonly queue: string;
  readonly name: string;
  /** The error's first line with its ids, numbers and quoted values replaced (errorShape). */
  readonly shape: string;
  readonly count: number;
  /** The newest of them: its id and its error's first line as it was. */
  readonly exampleId: number;
  readonly example: string;
  /** How long ago the newest and the oldest of them died (database clock). */
  readonly newestAgoMs: number;
  readonly oldestAgoMs: number;
}

export interface FailureGroups {
  /** Most first. */
  readonly groups: readonly FailureGroup[];
  /** Dead jobs read (not re-driven ones among the newest `limit`). */
  readonly read: number;
  /** The read stopped at `limit`: older dead jobs are not in the groups. */
  readonly capped: boolean;
}

/**
 * The newest dead jobs grouped by queue, job name and the shape of their error, most first: what
 * is failing, and how often, in one statement of `limit` index entries and rows however many dead
 * jobs are kept.
 */
export async function failureGroups(
  db: Executor,
  tables: Tables,
  options: FailureGroupOptions = {},
): Promise<FailureGroups> {
  const limit = options.limit ?? 2_000;
  integerIn('limit', limit, 1, 10_000);
  const rows = await db.select<{
    id: number | string;
    queue: string;
    name: string;
    live: number;
    head: string;
    ago_ms: number | string;
  }>(sqlNewest(tables), [limit]);
  const groups = new Map<string, { -readonly [K in keyof FailureGroup]: FailureGroup[K] }>();
  let read = 0;
  for (const r of rows) {
    if (!r.live) continue;
    read++;
    const shape = errorShape(r.head);
    const key = JSON.stringify([r.queue, r.name, shape]);
    const ago = Number(r.ago_ms);
    const group = groups.get(key);
    if (group) {
      // Rows come newest first: each later one is the group's oldest so far.
      group.count++;
      group.oldestAgoMs = ago;
    } else {
      groups.set(key, {
        queue: r.queue,
        name: r.name,
        shape,
        count: 1,
        exampleId: Number(r.id),
        example: r.head,
        newestAgoMs: ago,
        oldestAgoMs: ago,
      });
    }
  }
  const sorted = [...groups.values()].sort((a, b) => b.count - a.count || a.newestAgoMs - b.newestAgoMs);
  return { groups: sorted, read, capped: rows.length === limit };
}

/**
 * Pure: the shape of an error's first line: UUIDs, long hex runs, quoted values and numbers
 * replaced by <uuid>, <hex>, <str> and <n>, spaces collapsed, cut to 300 characters; so that
 * "order 1812 not found" and "order 77 not found" are one failure.
 */
export function errorShape(line: string): string {
  return line
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<uuid>')
    .replace(/\b(?:0x)?[0-9a-f]{12,}\b/gi, '<hex>')
    .replace(/"[^"]*"|'[^']*'|`[^`]*`/g, '<str>')
    .replace(/-?\b\d+(?:[.,:]\d+)*\b/g, '<n>')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, HEAD_CHARS);
}
