import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/runCli.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * Single enqueues that share commits (EnqueueCoalescer), in a real process killed (SIGKILL) while
 * 64 callers enqueue: every job whose id was acknowledged before the kill is there with its own
 * payload, and no job was written twice — whether the kill fell during a commit, between a commit
 * and its acknowledgements, or between two commits.
 */
const db = useTestDatabase('coalesced_crash');
const SCRIPT = fileURLToPath(new URL('../fixtures/scripts/coalescedEnqueues.ts', import.meta.url));
const CALLERS = 64;
const RUNS = 3;

/** Runs the enqueuing process until it has acknowledged at least `acks` jobs (then a random few ms more), kills it. */
async function runAndKill(run: string, acks: number): Promise<Map<number, string>> {
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT, db.url, String(CALLERS), run], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const acked = new Map<number, string>();
  let killed = false;
  createInterface({ input: child.stdout as Readable }).on('line', (line) => {
    const [id, key] = line.split(' ');
    acked.set(Number(id), key ?? '');
    if (!killed && acked.size >= acks) {
      killed = true;
      setTimeout(() => child.kill('SIGKILL'), Math.random() * 20);
    }
  });
  const [code, signal] = (await once(child, 'close')) as [number | null, string | null];
  expect(signal, `the enqueuer ended by itself (code ${code}): ${stderr}`).toBe('SIGKILL');
  return acked;
}

describe('a process killed while its enqueues share commits', () => {
  it('loses no acknowledged job and writes none twice', { timeout: 120_000 }, async () => {
    for (let r = 0; r < RUNS; r++) {
      const run = `run-${r}`;
      const acked = await runAndKill(run, 1_000 + r * 700);
      const rows = await db.query<{ id: number | string; payload: string }>(
        "SELECT id, payload FROM sluice_jobs WHERE name = 'acked' AND JSON_VALUE(payload, '$.run') = ?",
        [run],
      );
      const byId = new Map(rows.map((row) => [Number(row.id), JSON.parse(row.payload) as { key: string }]));
      const lost = [...acked].filter(([id, key]) => byId.get(id)?.key !== key);
      expect(lost, `acknowledged jobs missing or not theirs (run ${r})`).toEqual([]);
      const keys = rows.map((row) => (JSON.parse(row.payload) as { key: string }).key);
      expect(new Set(keys).size, `jobs written twice (run ${r})`).toBe(keys.length);
      // Jobs committed but not yet acknowledged when the kill fell may be there too.
      expect(rows.length).toBeGreaterThanOrEqual(acked.size);
    }
  });
});
