import { openSluice } from './openSluice.ts';
import { COMMON_HELP, help, parse } from './parse.ts';
import { renderTable } from './renderTable.ts';
import { terminalJson } from './terminalText.ts';

export const WORKERS_HELP = `sluice workers: the worker fleet, from the registry (one row per live worker)

  --json       one JSON document instead of a table
${COMMON_HELP}`;

export async function workersCommand(argv: string[]): Promise<number> {
  const { values: v } = parse(argv, { json: { type: 'boolean' } });
  if (v.help) return help(WORKERS_HELP);
  const sluice = await openSluice(v, { poolMax: 2 });
  try {
    const workers = await sluice.workers.list();
    if (v.json) {
      process.stdout.write(`${terminalJson({ workers })}\n`);
      return 0;
    }
    const percent = (x: number | null) => (x === null ? '-' : `${Math.round(x * 100)}%`);
    const rows = workers.map((w) => [
      w.host,
      w.pid,
      w.queues.join(','),
      `${w.inFlight}/${w.concurrencyLimit}/${w.concurrency}`,
      w.processed,
      w.failed,
      percent(w.cpu),
      percent(w.freeMem),
      `${(w.heartbeatAgeMs / 1000).toFixed(1)}s`,
      w.id,
    ]);
    process.stdout.write(
      `${renderTable(['host', 'pid', 'queues', 'running/limit/max', 'processed', 'failed', 'cpu', 'free mem', 'heartbeat', 'id'], rows)}\n`,
    );
    return 0;
  } finally {
    await sluice.close();
  }
}
