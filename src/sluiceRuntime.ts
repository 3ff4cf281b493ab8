import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Executor } from './db/executor.ts';
import type { SingleWriteLane } from './db/SingleWriteLane.ts';
import type { ServerInfo } from './db/serverInfo.ts';
import type { Tables } from './db/tables.ts';
import type { SluiceEvents } from './events.ts';
import type { ResolvedSluiceOptions } from './options.ts';
import type { InstallRetention } from './settings/InstallRetention.ts';
import type { Ringer } from './wakeups/Ringer.ts';

/** What every operation of one sluice install shares: the pool, table names, events, logger, options. */
export interface SluiceRuntime {
  readonly knex: Knex;
  /** The install's pool: enqueues, queries, maintenance, and what handlers reach through ctx.knex. */
  readonly db: Executor;
  /**
   * Workers' own statements — claims, completions, retries, dead-lettering, releases, and the
   * heartbeat (claim extensions, the registry row) — on a small pool of their own, so handlers that
   * hold every connection of `db` (long transactions, exactly-once jobs) cannot starve them. One
   * pool for all of them: an idle worker holds one connection of it, not one per duty. The same as
   * `db` when the application passed its own knex.
   */
  readonly workerDb: Executor;
  /**
   * Workers' read-ahead of payloads stored apart (PayloadPrefetch: PREFETCH_SLICES statements at
   * once) on a pool of its own, opened only while a worker reads ahead; null when the application
   * passed its own knex (no read-ahead then).
   */
  readonly prefetchDb: Executor | null;
  /**
   * The single enqueue's autocommit INSERT on a connection of `db`'s pool kept while writes come one
   * at a time (SingleWriteLane), or null when the application passed its own knex.
   */
  readonly writeLane: SingleWriteLane | null;
  readonly tables: Tables;
  readonly events: SluiceEvents;
  readonly logger: Logger;
  readonly options: ResolvedSluiceOptions;
  /** The install's retentions, as the settings table says (read at start, refreshed; see InstallRetention). */
  readonly retention: InstallRetention;
  /** Wakes workers after an enqueue commits: in this process at once, in others through their doorbells. */
  readonly ringer: Ringer;
  /**
   * A small pool of its own for one worker's doorbell (the connection it sleeps on), or null when
   * the application passed its own knex (sluice has no URL to open one): such workers are woken by
   * the in-process ring and by polling only.
   */
  readonly doorbellKnex: (() => Knex) | null;
  /** Read once per instance, on first use. */
  serverInfo(): Promise<ServerInfo>;
}
