import type { Tables } from '../db/tables.ts';
import { isLocalWorker } from './localRing.ts';
import { findParked, isToken, type RunOn, type SessionIdentity } from './parkedSleep.ts';

/**
 * Params: ?1 worker ids (list), ?2 tokens (list). The rows of registrations whose connection is
 * gone (their worker died or reconnected): fenced by the token, so a registration made since stays.
 */
const sqlForgetGone = (t: Tables) => `
DELETE FROM ${t.doorbells}
WHERE worker_id IN (?)
  AND token IN (?)`;

export interface DoorbellRow {
  /** The row's queue, or a pattern's key (patternDoorbells.ts). */
  readonly key: string;
  readonly workerId: string;
  readonly server: string;
  readonly connectionId: number;
  readonly token: string;
  readonly user: string;
}

/** One registration's sleep: its connection and token. */
export const sleepOf = (d: DoorbellRow) => `${d.connectionId}:${d.token}`;

/** What a read needs of the ringer's connection: a statement on it, and who it is (read only when a row needs it). */
export interface RingerConnection {
  readonly on: RunOn;
  identity(): Promise<SessionIdentity>;
}

/** What verifying needs of the cache: its tables, the rows of a key seen asleep before, and whom to tell of another user's rows. */
export interface VerifyingCache {
  readonly tables: Tables;
  seen(key: string): readonly DoorbellRow[] | undefined;
  /** Told when rows of another database user were read (they are left to polling). */
  onOtherUser(): void;
}

/** Deletes the rows of registrations whose connection is gone: one statement, as many as a read returned. */
export async function forgetGone(tables: Tables, gone: readonly DoorbellRow[], on: RunOn): Promise<void> {
  if (gone.length === 0) return;
  await on(sqlForgetGone(tables), [[...new Set(gone.map((d) => d.workerId))], [...new Set(gone.map((d) => d.token))]]);
}

/**
 * The rows read that can be rung from this connection, by key: those seen asleep before (in that
 * key's copy), and the new ones found asleep now, one read of the process list for all. Rows whose
 * connection has closed are deleted.
 */
export async function verifyDoorbells(
  keys: readonly string[],
  found: ReadonlyMap<string, readonly Record<string, unknown>[]>,
  connection: RingerConnection,
  cache: VerifyingCache,
): Promise<Map<string, DoorbellRow[]>> {
  const self = await connection.identity();
  const byKey = new Map<string, { seen: DoorbellRow[]; fresh: DoorbellRow[] }>();
  let otherUser = false;
  for (const key of keys) {
    const rows = (found.get(key) ?? []).map(doorbellOf);
    if (rows.length === 0) continue;
    otherUser ||= rows.some((d) => d.server === self.server && d.user !== self.user && isToken(d.token));
    const seen = new Set(cache.seen(key)?.map(sleepOf));
    const ringable = rows.filter((d) => ringableFrom(d, self));
    byKey.set(key, {
      seen: ringable.filter((d) => seen.has(sleepOf(d))),
      fresh: ringable.filter((d) => !seen.has(sleepOf(d))),
    });
  }
  if (otherUser) cache.onOtherUser();
  const { parked, gone } = await findParked(
    connection.on,
    self,
    [...byKey.values()].flatMap((q) => q.fresh),
  );
  await forgetGone(cache.tables, gone, connection.on);
  const asleep = new Set(parked.map(sleepOf));
  const result = new Map<string, DoorbellRow[]>();
  for (const [key, q] of byKey) result.set(key, [...q.seen, ...q.fresh.filter((d) => asleep.has(sleepOf(d)))]);
  return result;
}

function doorbellOf(r: Record<string, unknown>): DoorbellRow {
  return {
    key: String(r.queue),
    workerId: String(r.worker_id),
    server: String(r.server),
    connectionId: Number(r.connection_id),
    token: String(r.token),
    user: String(r.db_user),
  };
}

/** Doorbells a ring from `self` may reach: its server, its user, a token, another process, not itself. */
function ringableFrom(d: DoorbellRow, self: SessionIdentity): boolean {
  return (
    d.server === self.server &&
    d.user === self.user &&
    isToken(d.token) &&
    d.connectionId !== self.id &&
    !isLocalWorker(d.workerId)
  );
}
