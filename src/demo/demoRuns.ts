import type { Knex } from 'knex';

/**
 * The demo's application table: one row per handler run (the demo's job writes it). Counting its
 * rows is the demo's proof that every job ran exactly once.
 */
export const DEMO_RUNS_TABLE = 'sluice_demo_runs';

/** Params: none. */
const SQL_CREATE_RUNS = `
CREATE TABLE IF NOT EXISTS ${DEMO_RUNS_TABLE} (
  id     BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  job_id BIGINT UNSIGNED NOT NULL,
  n      INT NOT NULL,
  pid    INT NOT NULL,
  KEY ix_job (job_id)
) ENGINE=InnoDB`;
/** Params: none. */
const SQL_CLEAR_RUNS = `TRUNCATE TABLE ${DEMO_RUNS_TABLE}`;
/** Params: none. */
const SQL_DROP_RUNS = `DROP TABLE IF EXISTS ${DEMO_RUNS_TABLE}`;
/** Params: ?1 job id, ?2 payload number, ?3 worker pid. One row. */
export const SQL_RECORD_RUN = `INSERT INTO ${DEMO_RUNS_TABLE} (job_id, n, pid) VALUES (?, ?, ?)`;
/** Params: none. Returns handler runs, distinct jobs run, distinct payload numbers, distinct worker pids. */
const SQL_PROOF = `
SELECT COUNT(*) AS runs, COUNT(DISTINCT job_id) AS jobs, COUNT(DISTINCT n) AS numbers, COUNT(DISTINCT pid) AS pids
FROM ${DEMO_RUNS_TABLE}`;

export interface RunsProof {
  readonly runs: number;
  readonly jobs: number;
  readonly numbers: number;
  readonly pids: number;
}

/** Creates the table, empty. */
export async function createRuns(knex: Knex): Promise<void> {
  await knex.raw(SQL_CREATE_RUNS);
  await knex.raw(SQL_CLEAR_RUNS);
}

export async function dropRuns(knex: Knex): Promise<void> {
  await knex.raw(SQL_DROP_RUNS);
}

export async function runsProof(knex: Knex): Promise<RunsProof> {
  const [rows] = (await knex.raw(SQL_PROOF)) as [Record<string, number>[]];
  const row = rows[0];
  return { runs: Number(row?.runs), jobs: Number(row?.jobs), numbers: Number(row?.numbers), pids: Number(row?.pids) };
}
