import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';

/** The leader lease of the maintenance processes (a row of the leases table). */
export const MAINTENANCE_LEASE = 'maintenance';

/** What the leader records of one task after a pass it led. */
export interface TaskRun {
  readonly task: string;
  readonly durationMs: number;
  readonly counts: Readonly<Record<string, number>>;
  readonly behind: boolean;
}

/**
 * Params: per task (task, holder, duration ms, changed, behind). One row per task,
 * stamped with this statement's NOW(3): one statement a pass, however many tasks. Autocommit: re-run
 * by the Executor after a transient conflict (it writes the same values again).
 */
const sqlRecord = (t: Tables, rows: number) => `
INSERT INTO ${t.maintenanceTasks} (task, holder, ran_at, duration_ms, changed, behind)
VALUES ${Array.from({ length: rows }, () => '(?, ?, NOW(3), ?, ?, ?)').join(', ')}
ON DUPLICATE KEY UPDATE holder = VALUES(holder), ran_at = VALUES(ran_at), duration_ms = VALUES(duration_ms),
  changed = VALUES(changed), behind = VALUES(behind)`;

/** Records the tasks a pass ran (called by the leader, after the pass). */
export async function recordTaskRuns(
  db: Executor,
  tables: Tables,
  holder: string,
  runs: readonly TaskRun[],
): Promise<void> {
  if (runs.length === 0) return;
  const params = runs.flatMap((r) => {
    const changed = Object.values(r.counts).reduce((sum, n) => sum + n, 0);
    return [r.task, holder, Math.round(r.durationMs), changed, r.behind];
  });
  await db.write(sqlRecord(tables, runs.length), params);
}

/** Most task rows read (a row per task this build or an older one ran). */
const MAX_TASKS = 100;

/**
 * Params: ?1 lease name, ?2 limit. The lease row and every task's last run, on this server's
 * clock: one statement over two small tables (a row per lease, a row per task). No lease row: no
 * maintenance process ever ran here.
 */
const sqlHealth = (t: Tables) => `
SELECT l.holder,
       TIMESTAMPDIFF(MICROSECOND, l.expires_at, NOW(3)) DIV 1000 AS expired_for_ms,
       m.task,
       m.holder AS ran_by,
       TIMESTAMPDIFF(MICROSECOND, m.ran_at, NOW(3)) DIV 1000 AS ago_ms,
       m.duration_ms,
       m.changed,
       m.behind
FROM ${t.leases} l
LEFT JOIN ${t.maintenanceTasks} m ON TRUE
WHERE l.name = ?
ORDER BY m.ran_at DESC, m.task
LIMIT ?`;

/** One task's last run, as the leader recorded it. */
export interface TaskHealth {
  readonly task: string;
  /** The maintenance process (its lease holder name) that ran it. */
  readonly ranBy: string;
  /** How long ago it last ran, on the database's clock. */
  readonly agoMs: number;
  readonly durationMs: number;
  /** The sum of what it changed (rows released, pruned, …). */
  readonly changed: number;
  /** It stopped with more to do (its budget or batch cap): the next passes go on. */
  readonly behind: boolean;
}

/** Whether maintenance runs: the leader lease and each task's last run. */
export interface MaintenanceHealth {
  /** The lease holder, or null when none holds it (none ever did, or the last one stopped). */
  readonly leader: string | null;
  /**
   * How long ago the lease ran out (the leader stopped renewing it: it stopped or hangs), on this
   * server's clock; null while it has not. On Galera, the leader's node wrote the time: the
   * nodes' clock skew is in it.
   */
  readonly leaseExpiredForMs: number | null;
  /** Newest first; empty when no pass has been recorded. */
  readonly tasks: readonly TaskHealth[];
  /** How long ago the newest task ran (the last pass), or null when none has. */
  readonly lastPassAgoMs: number | null;
}

/** The leader lease and each task's last run, in one statement. */
export async function maintenanceHealth(db: Executor, tables: Tables): Promise<MaintenanceHealth> {
  const rows = await db.select<{
    holder: string;
    expired_for_ms: number | string | null;
    task: string | null;
    ran_by: string | null;
    ago_ms: number | string | null;
    duration_ms: number | string | null;
    changed: number | string | null;
    behind: number | null;
  }>(sqlHealth(tables), [MAINTENANCE_LEASE, MAX_TASKS]);
  const first = rows[0];
  const expiredFor = first?.expired_for_ms === null || first === undefined ? 0 : Number(first.expired_for_ms);
  const tasks = rows
    .filter((r) => r.task !== null)
    .map((r) => ({
      task: r.task as string,
      ranBy: r.ran_by ?? '',
      agoMs: Math.max(0, Number(r.ago_ms)),
      durationMs: Number(r.duration_ms),
      changed: Number(r.changed),
      behind: Boolean(r.behind),
    }));
  return {
    leader: first?.holder ? first.holder : null,
    leaseExpiredForMs: first !== undefined && first.holder !== '' && expiredFor > 0 ? expiredFor : null,
    tasks,
    lastPassAgoMs: tasks[0]?.agoMs ?? null,
  };
}
