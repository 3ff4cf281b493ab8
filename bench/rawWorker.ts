/**
 * The drain ceiling, one child process: the raw claim-and-delete loop (rawLoop.ts: plain mysql2,
 * no sluice code) over one connection, 50 jobs per claim, until SIGINT. Sends 'ready' once
 * connected, then starts at once (as `sluice work` does).
 *
 * usage: MYSQL_URL=URL node --import tsx bench/rawWorker.ts --table T --queue Q [--batch 50]
 * (the URL by environment: argv shows in `ps`, and the URL may hold a password)
 */
import { parseArgs } from 'node:util';
import { connectRaw } from './rawConnection.ts';
import { claimAndDelete, retryingConflicts } from './rawLoop.ts';

const { values: args } = parseArgs({
  options: {
    table: { type: 'string' },
    queue: { type: 'string' },
    batch: { type: 'string', default: '50' },
  },
});
const batch = Number(args.batch);
const IDLE_MS = 20;

async function main(): Promise<void> {
  const url = process.env.MYSQL_URL;
  if (!url) throw new Error('rawWorker: set MYSQL_URL');
  const conn = await connectRaw(url);
  let stopping = false;
  process.on('SIGINT', () => (stopping = true));
  process.send?.('ready');
  while (!stopping) {
    if ((await retryingConflicts(() => claimAndDelete(conn, args.table as string, args.queue as string, batch))) === 0)
      await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
  }
  await conn.end();
  process.disconnect?.();
}

await main();
