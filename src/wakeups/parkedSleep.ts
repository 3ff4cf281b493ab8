import { randomBytes } from 'node:crypto';
import { ER } from '../db/mysqlErrors.ts';

/**
 * A doorbell's parked sleep, and the only way sluice ends one. A worker's doorbell connection
 * runs `sqlSleep(token)`, with a token drawn for each registration and written in its rows. Before
 * a connection id read from those rows is ever used in a KILL, the ringer (an enqueuer, or the
 * doorbell itself at stop) finds that connection in the server's process list, over the very
 * connection the KILL will go out on, running exactly that text with that token, as its own user.
 * A connection id alone names nobody: ids start again after a restart, and whoever may INSERT
 * can write any id.
 *
 * Once seen asleep, `KILL QUERY <id>` over that same connection, then or later, can only reach
 * that doorbell: a connection id is not reused within a server life (the ringer's connection would
 * break with a restart, and it forgets what it verified), and a doorbell's connection runs nothing
 * but its sleeps after it registered. The one window: the KILL arrives between two of its sleeps
 * and ends the next one, a ring all the same. MariaDB's KILL QUERY ID would end only the statement
 * seen, but query ids change with every sleep: each ring would need a read of the process list, a
 * scan of every thread on the server (measured: bench/ringCost.ts).
 */

/** Text the processlist's INFO is compared with; our sleep is shorter, so a longer INFO never matches. */
const INFO_PREFIX_CHARS = 128;

/**
 * Params: none. This connection as the server sees it: its id, its user as the process list shows
 * it (a user without PROCESS sees only that user's threads, and may KILL those without any
 * privilege), and its server. Returns one row.
 */
const sqlIdentity = `
SELECT ID AS id, USER AS user, CONCAT(@@hostname, ':', @@port) AS server
FROM information_schema.PROCESSLIST
WHERE ID = CONNECTION_ID()`;

/**
 * Params: ?1 INFO prefix length, ?2 connection ids (list). Returns the connections among them that
 * are still there (and visible to this user), each with its user and the start of the statement it
 * runs. One scan of the server's thread list, whatever the number of ids.
 */
const sqlThreads = `
SELECT ID AS id, USER AS user, LEFT(INFO, ?) AS info
FROM information_schema.PROCESSLIST
WHERE ID IN (?)`;

/** Params: ?1 connection id, seen asleep in its doorbell's sleep over this connection. Ends that sleep. */
const sqlKill = `
KILL QUERY ?`;

/** How long one sleep lasts before it is simply sent again: a statement per this many seconds per idle worker. */
export const DOORBELL_SLEEP_SECONDS = 30;

/**
 * Params: none (the token is our own hex, never a value read from a row). The doorbell itself:
 * ends after DOORBELL_SLEEP_SECONDS (returns 0), or early when rung (MariaDB: error 1317; MySQL:
 * returns 1). No bindings and no leading space, so that the process list shows exactly this text.
 */
export const sqlSleep = (token: string) =>
  `SELECT SLEEP(${DOORBELL_SLEEP_SECONDS}) AS interrupted /* sluice-doorbell ${token} */`;

const TOKEN = /^[0-9a-f]{32}$/;

/** A registration's token: 128 random bits, hex. */
export function newToken(): string {
  return randomBytes(16).toString('hex');
}

/** Whether a row's token can name a sleep at all (rows of an earlier sluice have none: polling wakes those workers). */
export function isToken(token: string): boolean {
  return TOKEN.test(token);
}

/** Runs one statement on the connection in hand. */
export type RunOn = (sql: string, params?: readonly unknown[]) => Promise<unknown>;

export interface SessionIdentity {
  readonly id: number;
  readonly user: string;
  readonly server: string;
}

export interface SleepTarget {
  readonly connectionId: number;
  readonly token: string;
}

export async function readIdentity(on: RunOn): Promise<SessionIdentity> {
  const [[row]] = (await on(sqlIdentity)) as [Record<string, unknown>[]];
  if (!row) throw new Error('this connection is not in its own process list');
  return { id: Number(row.id), user: String(row.user), server: String(row.server) };
}

/**
 * One read of the process list for `targets` (the caller bounds their number). `parked`: the
 * targets whose connection runs their sleep, token and all, as `self`'s user. `gone`: the targets
 * whose connection is not in the list; the caller passes only targets of `self`'s user (always
 * visible to it), so those connections are closed. Any other target runs something else: never
 * rung, never deleted (a doorbell between two sleeps, or a row whose id now names another session).
 */
export async function findParked<T extends SleepTarget>(
  on: RunOn,
  self: SessionIdentity,
  targets: readonly T[],
): Promise<{ parked: T[]; gone: T[] }> {
  if (targets.length === 0) return { parked: [], gone: [] };
  const ids = [...new Set(targets.map((t) => t.connectionId))];
  const [rows] = (await on(sqlThreads, [INFO_PREFIX_CHARS, ids])) as [Record<string, unknown>[]];
  const threads = new Map(rows.map((r) => [Number(r.id), { user: String(r.user), info: r.info }]));
  const parked: T[] = [];
  const gone: T[] = [];
  for (const target of targets) {
    const thread = threads.get(target.connectionId);
    if (!thread) gone.push(target);
    else if (
      target.connectionId !== self.id &&
      thread.user === self.user &&
      isToken(target.token) &&
      thread.info === sqlSleep(target.token)
    )
      parked.push(target);
  }
  return { parked, gone };
}

/**
 * Ends the sleep of a doorbell that findParked found on this same connection. 'gone' (1094): its
 * connection has closed since (its worker stopped, died, or reconnected). 'denied' (1095): not
 * expected, findParked keeps only this user's connections.
 */
export async function killParked(on: RunOn, target: SleepTarget): Promise<'rung' | 'gone' | 'denied'> {
  try {
    await on(sqlKill, [target.connectionId]);
    return 'rung';
  } catch (error) {
    const errno = (error as { errno?: number }).errno;
    if (errno === ER.NO_SUCH_THREAD) return 'gone';
    if (errno === ER.KILL_DENIED) return 'denied';
    throw error;
  }
}
