import type { Executor } from '../../db/executor.ts';
import { idSet } from '../../db/idSet.ts';
import type { Tables } from '../../db/tables.ts';
import { withTransaction } from '../../db/transaction.ts';
import type { ClaimedRow } from './claimedRow.ts';
import { sqlHead } from './claimRandomHead.ts';
import { loadClaimedJobs } from './loadClaimedJobs.ts';

/** The current rate window's start: epoch ms on the DB clock, windows aligned to the interval (NULL without a rate). */
const WINDOW = 'FLOOR(FLOOR(UNIX_TIMESTAMP(NOW(3)) * 1000) / rate_interval_ms) * rate_interval_ms';

/**
 * Params: ?1 queue. The first statement of a limited claim: locks the queue's row by writing it
 * (limited claims of one queue take turns; on Galera two nodes' claims conflict at certification
 * instead of both counting the same free slots). The lock wait is bounded at 2 s (MariaDB SET
 * STATEMENT; MySQL 8 SET_VAR, which a server that does not accept it for this variable ignores
 * with a warning); a timeout (1205) re-runs the claim. affectedRows 1, or 0 when the
 * queue has no row (no limit). Nothing here reads the clock: NOW(3) is the statement's start, which
 * may be before a wait for the lock.
 */
const sqlLockQueue = (t: Tables) => `
/*M!100300 SET STATEMENT innodb_lock_wait_timeout = 2 FOR */
UPDATE /*+ SET_VAR(innodb_lock_wait_timeout = 2) */ ${t.queues}
SET limit_claims = limit_claims + 1
WHERE queue = ?`;

/**
 * Params: ?1 queue. The locked row, read once the lock is held, so that its NOW(3) decides the rate
 * window this claim counts in: the limits, the current window (epoch ms on the DB clock, windows
 * aligned to the interval), the starts it has counted (0 when the row's count is of an earlier
 * window), how long it has to go, and the pauses (ms).
 */
const sqlReadQueue = (t: Tables) => `
SELECT concurrency_cap, rate_limit,
       ${WINDOW} AS window_ms,
       IF(rate_window_ms <=> ${WINDOW}, rate_used, 0) AS rate_used,
       ${WINDOW} + rate_interval_ms - FLOOR(UNIX_TIMESTAMP(NOW(3)) * 1000) AS window_left_ms,
       paused_at IS NOT NULL AS paused,
       IF(paused_until > NOW(3), TIMESTAMPDIFF(MICROSECOND, NOW(3), paused_until) DIV 1000 + 1, 0) AS paused_for_ms
FROM ${t.queues}
WHERE queue = ?`;

/**
 * Params: ?1 queue, ?2 cap. The queue's claimed jobs, counted through the claimed range of ix_head
 * (queue, lock_id > ''), stopped at the cap: a read of at most `cap` index entries. READ
 * COMMITTED: every earlier limited claim of the queue has committed (they hold the row in turn).
 */
const sqlRunning = (t: Tables) => `
SELECT COUNT(*) AS running
FROM (SELECT 1 FROM ${t.jobs} WHERE queue = ? AND lock_id > '' LIMIT ?) AS claimed`;

/**
 * Params: ?1 lockId, then the idSet of the head's ids. Claims those still free and due; no queue
 * check: this transaction holds the queue's row. affectedRows = rows claimed.
 */
const sqlClaim = (t: Tables, ids: string) => `
UPDATE ${t.jobs}
SET lock_id = ?,
    locked_at = NOW(3),
    claimed_at = NOW(3)
WHERE ${ids}
  AND lock_id = ''
  AND run_at <= NOW(3)`;

/**
 * Params: ?1 window (epoch ms), ?2 the window's starts before this claim, ?3 this claim's, ?4 queue.
 * Counts this claim's starts in the window sqlReadQueue read (a new window starts its count again).
 */
const sqlCountStarts = (t: Tables) => `
UPDATE ${t.queues}
SET rate_window_ms = ?,
    rate_used = ? + ?
WHERE queue = ?`;

export interface LimitedClaimRequest {
  readonly queue: string;
  readonly priorities: readonly number[];
  readonly want: number;
  readonly lockId: string;
}

/** What a limited claim came to. */
export interface LimitedClaim {
  readonly rows: ClaimedRow[];
  /** The queue still has a limit (false: it was removed, claim the ordinary way). */
  readonly limited: boolean;
  /**
   * Why it claimed fewer than asked, if a limit or a pause held it back: then `waitMs` is how long
   * until claiming can succeed (the window's end, the pause's end), or null for a cap (a slot frees
   * when a running job ends).
   */
  readonly blocked: 'concurrency' | 'rate' | 'paused' | null;
  readonly waitMs: number | null;
}

/**
 * The claim of a queue with a cap or a rate: one short transaction that locks the queue's row by
 * writing it, then takes at most cap − running slots (running counted from jobs itself: a crashed
 * worker's slots come back when its claims are released, nothing to leak) and at most limit − used
 * starts of the current window, claims that many from the head, and counts them. The claimed rows
 * are loaded after the commit. A transient conflict re-runs the whole transaction.
 */
export async function claimWithinLimits(db: Executor, tables: Tables, req: LimitedClaimRequest): Promise<LimitedClaim> {
  const claim = await withTransaction(db, async (tx): Promise<Omit<LimitedClaim, 'rows'> & { claimed: number }> => {
    const { affectedRows } = await tx.write(sqlLockQueue(tables), [req.queue]);
    if (affectedRows === 0) return { limited: false, blocked: null, waitMs: null, claimed: 0 };
    const [row] = await tx.select<QueueRow>(sqlReadQueue(tables), [req.queue]);
    if (!row) return { limited: false, blocked: null, waitMs: null, claimed: 0 };
    const cap = row.concurrency_cap === null ? null : Number(row.concurrency_cap);
    const rate = row.rate_limit === null ? null : Number(row.rate_limit);
    const limited = cap !== null || rate !== null;
    const pausedForMs = Number(row.paused_for_ms);
    if (Number(row.paused) === 1 || pausedForMs > 0)
      return { limited, blocked: 'paused', waitMs: pausedForMs > 0 ? pausedForMs : null, claimed: 0 };
    let allowed = req.want;
    let blocked: LimitedClaim['blocked'] = null;
    let waitMs: number | null = null;
    if (rate !== null && rate - Number(row.rate_used) < allowed) {
      allowed = Math.max(0, rate - Number(row.rate_used));
      blocked = 'rate';
      waitMs = Math.max(1, Number(row.window_left_ms));
    }
    if (cap !== null && allowed > 0) {
      const [counted] = await tx.select<{ running: number | string }>(sqlRunning(tables), [req.queue, cap]);
      const free = Math.max(0, cap - Number(counted?.running ?? 0));
      if (free < allowed) {
        allowed = free;
        blocked = 'concurrency';
        waitMs = null;
      }
    }
    if (allowed === 0 || req.priorities.length === 0) return { limited, blocked, waitMs, claimed: 0 };
    // The head as claimRandomHead reads it (free and due, in order), `allowed` rows of it.
    const head = await tx.select<{ id: number }>(sqlHead(tables), [req.queue, req.priorities, allowed]);
    if (head.length === 0) return { limited, blocked: null, waitMs: null, claimed: 0 };
    const ids = idSet(
      'id',
      head.map((r) => Number(r.id)),
    );
    const claimed = (await tx.write(sqlClaim(tables, ids.sql), [req.lockId, ...ids.params])).affectedRows;
    if (rate !== null && claimed > 0)
      await tx.write(sqlCountStarts(tables), [row.window_ms, Number(row.rate_used), claimed, req.queue]);
    return { limited, blocked, waitMs, claimed };
  });
  const rows = claim.claimed > 0 ? await loadClaimedJobs(db, tables, req.queue, req.lockId) : [];
  return { rows, limited: claim.limited, blocked: claim.blocked, waitMs: claim.waitMs };
}

interface QueueRow {
  concurrency_cap: number | null;
  rate_limit: number | null;
  window_ms: number | string | null;
  rate_used: number | string;
  window_left_ms: number | string | null;
  paused: number;
  paused_for_ms: number | string;
}
