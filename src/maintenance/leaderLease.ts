import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';

/** Params: ?1 name. Makes sure the lease row exists (expired, held by nobody). Idempotent. */
const sqlEnsureLease = (t: Tables) => `
INSERT INTO ${t.leases} (name, holder, expires_at)
VALUES (?, '', NOW(3))
ON DUPLICATE KEY UPDATE name = name`;

/**
 * Params: ?1 holder, ?2 lease length in microseconds, ?3 name, ?4 holder. Takes the lease if it
 * expired (expires_at <= NOW(3): a row created or released this very millisecond is free), or
 * renews it if we hold it, on the DB clock. affectedRows 1 = we lead (mysql2 counts
 * matched rows), 0 = someone else does.
 */
const sqlAcquire = (t: Tables) => `
UPDATE ${t.leases}
SET holder = ?,
    expires_at = NOW(3) + INTERVAL ? MICROSECOND
WHERE name = ?
  AND (holder = ? OR expires_at <= NOW(3))`;

/** Params: ?1 name, ?2 holder. Gives the lease up at once if we hold it. */
const sqlRelease = (t: Tables) => `
UPDATE ${t.leases}
SET holder = '',
    expires_at = NOW(3)
WHERE name = ?
  AND holder = ?`;

/**
 * A leader lease in a table row: works across hosts and on Galera (which refuses GET_LOCK),
 * survives connection loss (the lease simply expires), and needs no dedicated connection.
 */
export class LeaderLease {
  #ensured = false;

  constructor(
    private readonly db: Executor,
    private readonly tables: Tables,
    readonly name: string,
    readonly holder: string,
    private readonly leaseMs: number,
  ) {}

  /** Takes or renews the lease. True while we lead. */
  async acquire(): Promise<boolean> {
    if (!this.#ensured) {
      await this.db.write(sqlEnsureLease(this.tables), [this.name]);
      this.#ensured = true;
    }
    const { affectedRows } = await this.db.write(sqlAcquire(this.tables), [this.holder, this.leaseMs * 1000, this.name, this.holder]);
    return affectedRows === 1;
  }

  async release(): Promise<void> {
    await this.db.write(sqlRelease(this.tables), [this.name, this.holder]);
  }
}
