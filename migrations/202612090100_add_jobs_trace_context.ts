import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * jobs.traceparent and jobs.tracestate: the context a job enqueued alone was enqueued under (W3C
 * Trace Context values, as job_traces holds them), written with its row. Before, a single enqueue
 * under an OpenTelemetry SDK wrote its context to job_traces in a transaction of its own
 * (BEGIN, the job, the context, COMMIT: four round trips where the job alone is one statement),
 * and cost 59–84 % of the enqueue rate. A batch's one context stays in job_traces (kind 'batch').
 *
 * NULL for a job without one (every job, with no SDK registered): nothing stored. Added at the
 * end of the row, nullable: an instant ADD COLUMN on MariaDB 10.3+ and MySQL 8.0.12+. A job
 * enqueued before this migration and claimed after it has no link to its enqueue's span (its
 * job_traces row is pruned with the retention). Re-runnable: the columns are looked up first.
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  const [rows] = (await knex.raw(
    `SELECT column_name AS name FROM information_schema.columns
     WHERE table_schema = DATABASE() AND table_name = ? AND column_name IN ('traceparent', 'tracestate')`,
    [`${t.prefix}jobs`],
  )) as [{ name: string }[]];
  const has = new Set(rows.map((r) => String(r.name)));
  const add = [
    has.has('traceparent') ? null : 'ADD COLUMN traceparent VARCHAR(55) CHARACTER SET ascii COLLATE ascii_bin NULL',
    has.has('tracestate') ? null : 'ADD COLUMN tracestate VARCHAR(512) CHARACTER SET ascii COLLATE ascii_bin NULL',
  ].filter((clause) => clause !== null);
  if (add.length > 0) await knex.raw(`ALTER TABLE ${t.jobs} ${add.join(', ')}`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`ALTER TABLE ${t.jobs} DROP COLUMN tracestate, DROP COLUMN traceparent`);
}
