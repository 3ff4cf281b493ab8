import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * The trace context jobs were enqueued under (W3C `traceparent`, and `tracestate` when there is
 * one): one row per single-job enqueue (`kind` 'job', `id` the job's id) or per batch (`kind`
 * 'batch', `id` the batch's id: its jobs share one context, written once however many they are),
 * made only while an OpenTelemetry SDK was registered; a worker links each attempt's span to it.
 * Kept out of the live jobs table, whose fixed-width rows a claim updates in place: jobs enqueued
 * without tracing cost nothing, and the claim path never reads it unless the worker itself has an
 * SDK (then one read per claim, by primary key). Written in the enqueue's transaction; kept while
 * any of its jobs lives and then as long as the history, pruned by the maintenance pass
 * (ix_created). traceparent's version 00 is 55 ASCII characters; tracestate is cut to whole list
 * members within 512.
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`
CREATE TABLE IF NOT EXISTS ${t.jobTraces} (
  kind         ENUM('job', 'batch') CHARACTER SET ascii NOT NULL,
  id           BIGINT UNSIGNED      NOT NULL,
  traceparent  VARCHAR(55)          CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  tracestate   VARCHAR(512)         CHARACTER SET ascii COLLATE ascii_bin NULL,
  created_at   DATETIME(3)          NOT NULL,
  PRIMARY KEY (kind, id),
  KEY ix_created (created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`DROP TABLE IF EXISTS ${t.jobTraces}`);
}
