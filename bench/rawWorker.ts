/**
 * The drain ceiling, one child process: a minimal claim-and-delete loop over one plain mysql2
 * connection (no sluice code), 50 jobs per claim, until SIGINT. Sends 'ready' once connected,
 * then starts at once (as `sluice work` does).
 *
 * The loop is one short SKIP LOCKED transaction per batch: BEGIN; lock the head with
 * SELECT … FOR UPDATE SKIP LOCKED; DELETE those ids; COMMIT — four round trips and one durable
 * commit. In a trial on MariaDB 10.11 (2 cores) it beat the autocommit alternative (UPDATE … SET
 * lock_id … ORDER BY … LIMIT 50; SELECT the claimed rows; DELETE them: three round trips, two
 * commits) at 1, 2 and 4 processes (4,160 / 6,469 / 5,643 vs 2,100 / 5,463 / 5,150 jobs/s), so
 * it is the ceiling.
 *
 * usage: node --import tsx bench/rawWorker.ts --url URL --table T --queue Q [--batch 50]
 */
import { parseArgs } from 'node:util';
import type { Connection, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { connectRaw } from './benchDatabase.ts';

const { values: args } = parseArgs({
  options: {
    url: { type: 'string' },
    table: { type: 'string' },
    queue: { type: 'string' },
    batch: { type: 'string', default: '50' },
  },
});
const table = `\`${args.table}\``;
const batch = Number(args.batch);
const IDLE_MS = 20;

/** Params: ?1 queue, ?2 batch. Locks the head (ix_head, in order), skipping rows other transactions hold. */
const SQL_LOCK_HEAD = `
SELECT id, payload
FROM ${table}
WHERE queue = ?
  AND lock_id = ''
  AND run_at <= NOW(3)
ORDER BY priority, run_at, id
LIMIT ?
FOR UPDATE SKIP LOCKED`;

/** Params: ?1 ids (all locked by this transaction). affectedRows = ids.length. */
const SQL_DELETE = `
DELETE FROM ${table}
WHERE id IN (?)`;

/** One batch: returns how many jobs it took and finished (0: the queue had none free). */
async function claimAndDelete(conn: Connection): Promise<number> {
  await conn.query('BEGIN');
  try {
    const [rows] = await conn.query<RowDataPacket[]>(SQL_LOCK_HEAD, [args.queue, batch]);
    const done = rows.length === 0 ? 0 : (await conn.query<ResultSetHeader>(SQL_DELETE, [rows.map((r) => r.id)]))[0].affectedRows;
    await conn.query('COMMIT');
    return done;
  } catch (error) {
    await conn.query('ROLLBACK');
    throw error;
  }
}

/** A deadlock (1213) or lock wait timeout (1205) rolled the batch back: it is simply taken again. */
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
  let stopping = false;
  process.on('SIGINT', () => (stopping = true));
  process.send?.('ready');
  while (!stopping) {
    if ((await retryingConflicts(() => claimAndDelete(conn))) === 0) await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
  }
  await conn.end();
  process.disconnect?.();
}

await main();
