import type { Executor } from '../db/executor.ts';

/**
 * What a walk over the jobs tables is made of (jobPlans.ts says which walk serves which filter):
 * its segments, their keys, and the residual filter checked per row read.
 */

/**
 * Most statements one listing page or one count sends, besides finishing the segment it is in: a
 * walk past many queues or priorities stops there, with a cursor to go on from (a count says "at
 * least"). Queues and priorities are read a thousand per statement (queueHeads.ts), so this takes
 * a walk past thousands of queues.
 */
export const MAX_STATEMENTS = 100;

/** One index range, read in index order. */
export interface Segment {
  /** Names the segment in a cursor. */
  readonly id: readonly (string | number)[];
  /** `<table> j FORCE INDEX (<index>)` */
  readonly from: string;
  /** The range (the index prefix), with `?` params. */
  readonly where: string;
  readonly params: readonly unknown[];
  /** The key columns in index order (`sql`) and the field of the summary row each is read back as. */
  readonly keys: readonly SegmentKey[];
  readonly descending: boolean;
}

/** One key column of a segment, and the kind of value a cursor holds for it. */
export interface SegmentKey {
  readonly sql: string;
  readonly field: string;
  readonly kind: 'time' | 'id' | 'text';
}

/** A live or dead job's id, as the last key of a range. */
export const ID_KEY: SegmentKey = { sql: 'j.id', field: 'id', kind: 'id' };

/** A segment's ORDER BY: its keys in index order, in its direction. */
export function orderBy(segment: Segment): string {
  return segment.keys.map((k) => `${k.sql}${segment.descending ? ' DESC' : ''}`).join(', ');
}

export interface Plan {
  readonly table: 'jobs' | 'history' | 'dead';
  /** The SELECT list of a summary row (alias j). */
  readonly columns: string;
  /** Filters the index does not serve, as SQL over j's columns; null when the range is exact. */
  readonly residual: { readonly sql: string; readonly params: readonly unknown[] } | null;
  /** The segments in order, from the one `from` names (or the first). */
  segments(db: Executor, from?: readonly (string | number)[]): AsyncIterable<Segment>;
  /**
   * True when the walk passes every live queue: many segments, most of them small, which a count
   * reads 250 per statement; else the few segments of one range, queue or batch.
   */
  readonly wide: boolean;
  /** The walk's one segment when it is a single range known without a statement; else null. */
  readonly single: Segment | null;
  /** Pure: the keys of the segment a cursor names, or null when no walk of this table has such a segment. */
  keysOf(id: readonly (string | number)[]): readonly SegmentKey[] | null;
}

/** Filters a plan checks per row read, as SQL with params. */
export class Residual {
  readonly clauses: string[] = [];
  readonly params: unknown[] = [];

  add(sql: string, ...params: unknown[]): void {
    this.clauses.push(sql);
    this.params.push(...params);
  }

  /** The residual of a plan (null when nothing is left to check per row). */
  get value(): Plan['residual'] {
    return this.clauses.length === 0 ? null : { sql: this.clauses.join(' AND '), params: this.params };
  }
}
