import type { Knex } from 'knex';

interface TarnPool {
  numUsed(): number;
  numFree(): number;
}

/** The server connections these knex pools hold now, in use or idle (what a "too many connections" costs this process). */
export function connectionsHeld(pools: readonly Knex[]): number {
  let held = 0;
  for (const knex of pools) {
    const pool = (knex.client as { pool?: TarnPool | null }).pool;
    if (pool) held += pool.numUsed() + pool.numFree();
  }
  return held;
}
