import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { type MonotonicClock, UnchangedSince } from './UnchangedSince.ts';

/** Params: ?1 name. Makes sure the lease row exists (held by nobody). Idempotent. */
const sqlEnsureLease = (t: Tables) => `
INSERT INTO ${t.leases} (name, holder, expires_at)
VALUES (?, '', NOW(3))
ON DUPLICATE KEY UPDATE name = name`;

/** Params: ?1 name. The lease as it stands: who holds it, and what changes with every renewal. */
const sqlRead = (t: Tables) => `
SELECT holder, version, expires_at
FROM ${t.leases}
WHERE name = ?`;

/**
 * Params: ?1 new holder, ?2 lease length in microseconds, ?3 name, ?4 holder and ?5 version as
 * read. Takes, renews or takes over the lease, fenced on what was read: of several contenders
 * acting on one reading, exactly one matches. affectedRows 1 = we lead. expires_at is written for
 * maintenance processes of earlier versions (which compare it with their own NOW(3)) and for
 * people reading the row; this version never reads it as a time.
 */
const sqlTake = (t: Tables) => `
UPDATE ${t.leases}
SET holder = ?,
    version = version + 1,
    expires_at = NOW(3) + INTERVAL ? MICROSECOND
WHERE name = ?
  AND holder = ?
  AND version = ?`;

/** Params: ?1 name, ?2 holder. Gives the lease up at once if we hold it. */
const sqlRelease = (t: Tables) => `
UPDATE ${t.leases}
SET holder = '',
    version = version + 1,
    expires_at = NOW(3)
WHERE name = ?
  AND holder = ?`;

/**
 * A leader lease in a table row: works across hosts and on Galera (which refuses GET_LOCK),
 * survives connection loss (the lease simply runs out), and needs no dedicated connection.
 *
 * Time is measured on one clock per process, never across servers: a contender takes the lease
 * over once the row's (holder, version, expires_at) has not changed for leaseMs of its own
 * monotonic clock; the holder acts as leader only while less than leaseMs of its own clock has
 * passed since it sent its last successful renewal (`valid`). A renewal's effect starts after it
 * was sent, and a contender's wait starts after it first read that renewal, so the holder always
 * stops before anyone may take over (clock rates being equal). A lease given up (holder '') is
 * taken at once; an abandoned one is taken leaseMs after a contender first saw it unchanged — so
 * a contender that has just started waits that long even for a lease whose holder died long ago.
 */
export class LeaderLease {
  #ensured = false;
  #renewedAt: number | null = null;
  readonly #seen: UnchangedSince<string>;

  constructor(
    private readonly db: Executor,
    private readonly tables: Tables,
    readonly name: string,
    readonly holder: string,
    private readonly leaseMs: number,
    private readonly clock: MonotonicClock,
  ) {
    this.#seen = new UnchangedSince(clock);
  }

  /** Takes or renews the lease if it may. True while we lead. */
  async acquire(): Promise<boolean> {
    if (!this.#ensured) {
      await this.db.write(sqlEnsureLease(this.tables), [this.name]);
      this.#ensured = true;
    }
    const sent = this.clock();
    const [row] = await this.db.select<{ holder: string; version: number | string; expires_at: Date }>(
      sqlRead(this.tables),
      [this.name],
    );
    if (!row) return this.#lost();
    const stillMs = this.#seen.see(this.name, `${row.holder}/${row.version}/${row.expires_at.getTime()}`);
    const mayTake = row.holder === this.holder || row.holder === '' || stillMs >= this.leaseMs;
    if (!mayTake) return this.#lost();
    const { affectedRows } = await this.db.write(sqlTake(this.tables), [
      this.holder,
      this.leaseMs * 1000,
      this.name,
      row.holder,
      row.version,
    ]);
    if (affectedRows !== 1) return this.#lost();
    this.#renewedAt = sent;
    return true;
  }

  /** Whether we may still act as leader: less than leaseMs of our clock since our last renewal was sent. */
  get valid(): boolean {
    return this.#renewedAt !== null && this.clock() - this.#renewedAt < this.leaseMs;
  }

  async release(): Promise<void> {
    this.#renewedAt = null;
    await this.db.write(sqlRelease(this.tables), [this.name, this.holder]);
  }

  #lost(): false {
    this.#renewedAt = null;
    return false;
  }
}
