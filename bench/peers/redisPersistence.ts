/**
 * The local Redis's persistence, switched for the bench and put back afterwards. BullMQ runs in two
 * rows: without persistence (`appendonly no`, no snapshots: what a bench usually measures) and as
 * production runs it (`appendonly yes`, `appendfsync everysec`: the append-only file written at
 * every command and fsynced once a second, so a crash loses up to a second of acknowledged jobs).
 * The first switch reads the server's own settings; restoreRedisPersistence() (idempotent) writes
 * them back, and is also run on SIGINT/SIGTERM and on an uncaught failure, so a bench that stops
 * half-way leaves the server as it found it. The append-only files Redis wrote stay in its `dir`
 * (Redis does not delete them when AOF is switched off; a server started with `appendonly no`
 * ignores them).
 */
import { Redis, type RedisOptions } from 'ioredis';
import { onInterrupt } from '../onInterrupt.ts';

export type RedisPersistence = 'none' | 'aof-everysec';

const SETTINGS: Record<RedisPersistence, Record<string, string>> = {
  none: { appendonly: 'no', save: '' },
  'aof-everysec': { appendonly: 'yes', appendfsync: 'everysec' },
};
const KEYS = ['appendonly', 'appendfsync', 'save'] as const;
const REWRITE_POLL_MS = 50;
const REWRITE_TIMEOUT_MS = 60_000;

let admin: Redis | null = null;
let original: Record<string, string> | null = null;
let current: RedisPersistence | null = null;

/** The durability a mode gives, for the report. */
export function describePersistence(mode: RedisPersistence): string {
  return mode === 'none'
    ? 'none (in memory: appendonly no, no snapshots)'
    : 'AOF, fsync every second (appendonly yes, appendfsync everysec)';
}

/** Switches the server to `mode` unless it is in it already; waits out the rewrite AOF starts with. */
export async function useRedisPersistence(connection: RedisOptions, mode: RedisPersistence): Promise<void> {
  if (current === mode) return;
  if (!admin) admin = new Redis({ ...connection, maxRetriesPerRequest: 1 });
  if (!original) {
    original = await configGet(admin);
    onInterrupt(restoreRedisPersistence);
  }
  for (const [key, value] of Object.entries(SETTINGS[mode])) await admin.config('SET', key, value);
  current = mode;
  if (mode === 'aof-everysec') await waitForRewrite(admin);
}

/** Puts back what the server had before the first switch (nothing to do if none happened). */
export async function restoreRedisPersistence(): Promise<void> {
  const conn = admin;
  const saved = original;
  admin = null;
  original = null;
  current = null;
  if (!conn) return;
  try {
    if (saved) {
      // appendonly last: switching it on starts a rewrite with the fsync policy already in place.
      for (const key of KEYS.filter((k) => k !== 'appendonly')) await conn.config('SET', key, saved[key] ?? '');
      await conn.config('SET', 'appendonly', saved.appendonly ?? 'no');
    }
  } finally {
    conn.disconnect();
  }
}

async function configGet(conn: Redis): Promise<Record<string, string>> {
  const pairs = (await conn.config('GET', ...KEYS)) as string[];
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < pairs.length; i += 2) out[pairs[i] as string] = pairs[i + 1] as string;
  return out;
}

/** CONFIG SET appendonly yes starts a background rewrite; the row is timed once it is done. */
async function waitForRewrite(conn: Redis): Promise<void> {
  const deadline = performance.now() + REWRITE_TIMEOUT_MS;
  while (performance.now() < deadline) {
    const info = await conn.info('persistence');
    const field = (name: string) => new RegExp(`${name}:(\\d+)`).exec(info)?.[1];
    if (
      field('aof_enabled') === '1' &&
      field('aof_rewrite_in_progress') === '0' &&
      field('aof_rewrite_scheduled') === '0'
    )
      return;
    await new Promise((resolve) => setTimeout(resolve, REWRITE_POLL_MS));
  }
  throw new Error(`Redis: AOF rewrite still running after ${REWRITE_TIMEOUT_MS} ms`);
}
