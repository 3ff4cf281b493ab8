/**
 * Waits, before a timed window, until the host's CPUs are quiet: the previous measurement's
 * background work (InnoDB's purge, PostgreSQL's autovacuum after a peer's 100,000 deletes, a
 * child still exiting) would otherwise run inside the next system's window, on these shared
 * 2-core machines the one the harness happened to schedule next. Reads /proc/stat (Linux); where
 * it cannot, returns at once.
 */
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { progress } from './progress.ts';

/** Busy share of all CPUs below which the host counts as quiet. */
const QUIET_BUSY = 0.15;
const SAMPLE_MS = 250;
/** Quiet samples in a row that end the wait. */
const QUIET_SAMPLES = 2;
const GIVE_UP_MS = 20_000;

/** Resolves once QUIET_SAMPLES samples in a row were quiet, or after giveUpMs (saying so). */
export async function quietHost(label: string, giveUpMs = GIVE_UP_MS): Promise<void> {
  let before = cpuTicks();
  if (before === null) return;
  const started = performance.now();
  let quiet = 0;
  let busy = 1;
  while (performance.now() - started < giveUpMs) {
    await sleep(SAMPLE_MS);
    const after = cpuTicks();
    if (after === null) return;
    busy = (after.busy - before.busy) / Math.max(1, after.total - before.total);
    before = after;
    quiet = busy < QUIET_BUSY ? quiet + 1 : 0;
    if (quiet >= QUIET_SAMPLES) return;
  }
  progress(`${label}: host still ${Math.round(busy * 100)} % busy after ${giveUpMs / 1000} s; timing anyway`);
}

/** Pure: busy and total jiffies from /proc/stat's aggregate `cpu` line (idle and iowait count as idle). */
export function parseCpuLine(stat: string): { busy: number; total: number } | null {
  const line = stat.split('\n').find((l) => l.startsWith('cpu '));
  if (!line) return null;
  const fields = line.trim().split(/\s+/).slice(1).map(Number);
  const total = fields.slice(0, 8).reduce((a, b) => a + b, 0);
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
  return { busy: total - idle, total };
}

function cpuTicks(): { busy: number; total: number } | null {
  try {
    return parseCpuLine(readFileSync('/proc/stat', 'utf8'));
  } catch {
    return null;
  }
}
