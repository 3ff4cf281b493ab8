import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { connect } from './db/connect.ts';
import { fromKnex } from './db/executor.ts';
import { SingleWriteLane } from './db/SingleWriteLane.ts';
import { readServerInfo, type ServerInfo } from './db/serverInfo.ts';
import type { Tables } from './db/tables.ts';
import type { SluiceEvents } from './events.ts';
import type { ResolvedSluiceOptions } from './options.ts';
import { InstallRetention } from './settings/InstallRetention.ts';
import type { RetentionSettings } from './settings/installSettings.ts';
import type { SluiceRuntime } from './sluiceRuntime.ts';
import { Ringer } from './wakeups/Ringer.ts';
import { PREFETCH_SLICES } from './worker/PayloadPrefetch.ts';

/**
 * Connections of the pool that carries workers' claims, outcome writes and heartbeats (each worker
 * writes a claim or a batch at a time; a beat takes one between them). Opened as used, reaped when idle.
 */
const WORKER_POOL_MAX = 4;

export interface RuntimeParts {
  /** The install's pool: the app's knex, or the one sluice opened from `url`. */
  readonly knex: Knex;
  readonly ownsKnex: boolean;
  /** The URL sluice connects with; null when the app passed its own knex (no pools of sluice's own then). */
  readonly url: string | null;
  readonly resolved: ResolvedSluiceOptions;
  /** The retentions the options gave (InstallRetention reads the settings beside them). */
  readonly givenRetention: Partial<RetentionSettings>;
  readonly tables: Tables;
  readonly events: SluiceEvents;
  readonly logger: Logger;
}

/**
 * The runtime one install's operations share (SluiceRuntime) around its pool: with a URL, also the
 * small pools of workers' own statements, of read-ahead, of the ringer and of each doorbell, whose
 * statements `knex` emits as its own 'query' events. Returns the pools it opened that the install
 * closes (a doorbell closes its own).
 */
export function openRuntime(parts: RuntimeParts): { runtime: SluiceRuntime; controlKnex: Knex[] } {
  const { knex, ownsKnex, url, resolved, tables, events, logger } = parts;
  const controlKnex: Knex[] = [];
  const db = fromKnex(knex, { readCommitted: ownsKnex, foreign: !ownsKnex });
  const ownPool = (poolMax: number, keep: boolean): Knex => {
    const own = connect({
      url: url as string,
      poolMax,
      logger,
      idleTransactionTimeoutMs: resolved.idleTransactionTimeoutMs,
    });
    // One place to watch every statement sluice sends: sluice.knex's 'query' event.
    own.on('query', (query: unknown) => knex.emit('query', query));
    if (keep) controlKnex.push(own);
    return own;
  };
  const controlPool = (poolMax: number) => (url ? fromKnex(ownPool(poolMax, true), { readCommitted: true }) : db);
  let serverInfo: Promise<ServerInfo> | undefined;
  const runtime: SluiceRuntime = {
    knex,
    db,
    workerDb: controlPool(WORKER_POOL_MAX),
    prefetchDb: url ? controlPool(PREFETCH_SLICES) : null,
    writeLane: ownsKnex ? new SingleWriteLane(knex) : null,
    ringer: new Ringer({ knex: url ? ownPool(1, true) : null, tables, events }),
    doorbellKnex: url ? () => ownPool(2, false) : null,
    tables,
    events,
    logger,
    options: resolved,
    retention: new InstallRetention(
      db,
      tables,
      { historyRetentionMs: resolved.historyRetentionMs, deadRetentionMs: resolved.deadRetentionMs },
      parts.givenRetention,
      events,
    ),
    serverInfo: () => (serverInfo ??= readServerInfo(db)),
  };
  return { runtime, controlKnex };
}
