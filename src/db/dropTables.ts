import type { Knex } from 'knex';
import type { Tables } from './tables.ts';

/**
 * Params: none. Drops every table of one install, knex's migration tables included: its jobs,
 * history and dead jobs are gone. Only for an install that is the caller's own (`sluice demo`'s
 * private prefix), never an application's.
 */
const sqlDropTables = (t: Tables) => `
DROP TABLE IF EXISTS ${t.jobs}, ${t.batches}, ${t.deadJobs}, ${t.leases}, ${t.queues}, ${t.idempotencyKeys},
  ${t.workers}, ${t.jobHistory}, ${t.jobProgress}, ${t.jobErrors}, ${t.jobLogs}, ${t.jobTraces}, ${t.jobPayloads},
  ${t.doorbells}, ${t.queueDepths}, ${t.jobEdges}, ${t.jobGraphHistory}, ${t.jobHolds}, ${t.jobGroups}, ${t.jobDebounces},
  ${t.jobGroupMembers}, ${t.settings}, ${t.schedules}, ${t.scheduleRuns}, ${t.maintenanceTasks},
  \`${t.migrations}\`, \`${t.migrationsLock}\``;

export async function dropTables(knex: Knex, tables: Tables): Promise<void> {
  await knex.raw(sqlDropTables(tables));
}
