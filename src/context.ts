import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Executor } from './db/executor.ts';
import type { ServerInfo } from './db/serverInfo.ts';
import type { Tables } from './db/tables.ts';
import type { SluiceEvents } from './events.ts';
import type { ResolvedSluiceOptions } from './options.ts';

/** What every operation of one sluice instance shares: the pool, table names, events, logger, options. */
export interface SluiceContext {
  readonly knex: Knex;
  readonly db: Executor;
  readonly tables: Tables;
  readonly events: SluiceEvents;
  readonly logger: Logger;
  readonly options: ResolvedSluiceOptions;
  /** Read once per instance, on first use. */
  serverInfo(): Promise<ServerInfo>;
}
