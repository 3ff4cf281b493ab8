/**
 * The drain ceiling, one child process: the raw claim-and-delete loop (rawLoop.ts: plain mysql2,
 * no sluice code) over one connection, 50 jobs per claim, until SIGINT. Sends 'ready' once
 * connected, then starts at once (as `sluice work` does).
 *
 * usage: node --import tsx bench/rawWorker.ts --url URL --table T --queue Q [--batch 50]
 */
import { parseArgs } from 'node:util';
import { connectRaw } from './rawConnection.ts';
import { claimAndDelete, retryingConflicts } from './rawLoop.ts';

const { values: args } = parseArgs({
  options: {
    url: { type: 'string' },
    table: { type: 'string' },
    queue: { type: 'string' },
    batch: { type: 'string', default: '50' },
  },
});
const batch = Number(args.batch);
const IDLE_MS = 20;

async function main(): Promise<void> {
  const conn = await connectRaw(args.url as string);
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
