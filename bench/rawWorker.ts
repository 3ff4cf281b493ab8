/**
 * The drain ceiling, one child process: a minimal claim-and-delete loop over one plain mysql2
 * connection (no sluice code), 50 jobs per claim, until SIGINT. Sends 'ready' once connected,
 * then starts at once (as `sluice work` does).
 *
 * usage: node --import tsx bench/rawWorker.ts --url URL --table T --queue Q [--batch 50] [--loop update|skip-locked]
 */
import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import type { Connection, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { connectRaw } from './benchDatabase.ts';

type Loop = 'update' | 'skip-locked';

const { values: args } = parseArgs({
  options: {
    url: { type: 'string' },
    table: { type: 'string' },
    queue: { type: 'string' },
    batch: { type: 'string', default: '50' },
    loop: { type: 'string', default: 'update' },
  },
});
const table = `\`${args.table}\``;
const batch = Number(args.batch);

/** Params: ?1 lockId, ?2 queue, ?3 batch. Claims the head in one autocommit statement. */
const SQL_CLAIM = `
UPDATE ${table}
SET lock_id = ?, locked_at = NOW(3)
WHERE queue = ? AND lock_id = '' AND run_at <= NOW(3)
ORDER BY priority, run_at, id
LIMIT ?`;
/** Params: ?1 lockId. The claimed rows. */
const SQL_CLAIMED = `SELECT id, payload FROM ${table} WHERE lock_id = ?`;
/** Params: ?1 lockId, ?2 ids. */
const SQL_DELETE_CLAIMED = `DELETE FROM ${table} WHERE lock_id = ? AND id IN (?)`;
/** Params: ?1 queue, ?2 batch. Locks the head, skipping rows other transactions hold. */
const SQL_LOCK_HEAD = `
SELECT id, payload FROM ${table}
WHERE queue = ? AND lock_id = '' AND run_at <= NOW(3)
ORDER BY priority, run_at, id
LIMIT ?
FOR UPDATE SKIP LOCKED`;
/** Params: ?1 ids. */
const SQL_DELETE = `DELETE FROM ${table} WHERE id IN (?)`;

let sequence = 0;

/** UPDATE … ORDER BY … LIMIT claim, read back, delete: three autocommit statements. */
async function claimAndDeleteByUpdate(conn: Connection): Promise<number> {
  const lockId = `${hostname()}-${process.pid}.${++sequence}`;
  const [claim] = await conn.query<ResultSetHeader>(SQL_CLAIM, [lockId, args.queue, batch]);
  if (claim.affectedRows === 0) return 0;
  const [rows] = await conn.query<RowDataPacket[]>(SQL_CLAIMED, [lockId]);
  const [done] = await conn.query<ResultSetHeader>(SQL_DELETE_CLAIMED, [lockId, rows.map((r) => r.id)]);
  return done.affectedRows;
}

/** BEGIN, SELECT … FOR UPDATE SKIP LOCKED, DELETE, COMMIT: one transaction, one commit. */
async function claimAndDeleteSkipLocked(conn: Connection): Promise<number> {
  await conn.query('BEGIN');
  try {
    const [rows] = await conn.query<RowDataPacket[]>(SQL_LOCK_HEAD, [args.queue, batch]);
    if (rows.length === 0) {
      await conn.query('COMMIT');
      return 0;
    }
    const [done] = await conn.query<ResultSetHeader>(SQL_DELETE, [rows.map((r) => r.id)]);
    await conn.query('COMMIT');
    return done.affectedRows;
  } catch (error) {
    await conn.query('ROLLBACK');
    throw error;
  }
}

/** A deadlock (1213) or lock wait timeout (1205) rolled the statement back: try again. */
async function retryingConflicts(fn: () => Promise<number>): Promise<number> {
  try {
    return await fn();
  } catch (error) {
    const errno = (error as { errno?: number }).errno;
    if (errno === 1213 || errno === 1205) return 0;
    throw error;
  }
}

async function main(): Promise<void> {
  const conn = await connectRaw(args.url as string);
  const step = (args.loop as Loop) === 'skip-locked' ? claimAndDeleteSkipLocked : claimAndDeleteByUpdate;
  let stopping = false;
  process.on('SIGINT', () => (stopping = true));
  process.send?.('ready');
  while (!stopping) {
    if ((await retryingConflicts(() => step(conn))) === 0) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await conn.end();
  process.disconnect?.();
}

await main();
