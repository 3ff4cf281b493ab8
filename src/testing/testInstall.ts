import { randomBytes } from 'node:crypto';
import { dropTables } from '../db/dropTables.ts';
import { createLogger } from '../logging.ts';
import type { SluiceOptions } from '../options.ts';
import { createSluice, type Sluice } from '../Sluice.ts';

/** An install of its own for a test: a fresh table prefix, migrated. */
export interface TestInstall {
  readonly sluice: Sluice;
  /** Its table prefix: `sluice_test_<random>_` unless the options named one. */
  readonly prefix: string;
  /** Drops every table of the install and closes its pools (an app's own knex is left open). Idempotent. */
  destroy(): Promise<void>;
}

/**
 * Creates a sluice install of its own in the database of `options` (url or knex, as createSluice):
 * a table prefix no other test uses, every migration applied. Give each test file (or each test)
 * one and `destroy()` it after: the tables are dropped, so nothing of one test is seen by another,
 * and tests run in parallel on one database without sharing a queue. Its logger is silent unless
 * `LOG_LEVEL` (or the options' own logger) says otherwise.
 */
export async function createTestInstall(options: SluiceOptions = {}): Promise<TestInstall> {
  const prefix = options.tablePrefix ?? `sluice_test_${randomBytes(4).toString('hex')}_`;
  const logger = options.logger ?? createLogger({ level: process.env.LOG_LEVEL ?? 'silent' });
  const sluice = createSluice({ ...options, tablePrefix: prefix, logger });
  let destroyed: Promise<void> | undefined;
  const destroy = () => (destroyed ??= dropTables(sluice.knex, sluice.tables).finally(() => sluice.close()));
  try {
    await sluice.migrate();
  } catch (error) {
    await destroy().catch(() => undefined);
    throw error;
  }
  return { sluice, prefix, destroy };
}
