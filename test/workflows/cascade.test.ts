import type { Knex } from 'knex';
import { describe, expect, it } from 'vitest';
import { fromKnex } from '../../src/db/executor.ts';
import { defineJob } from '../../src/index.ts';
import { CASCADE_LEVELS } from '../../src/jobControl/cancelJobs.ts';
import { reconcileHolds } from '../../src/maintenance/reconcileHolds.ts';
import { countRows } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { withWorker } from '../helpers/workerHarness.ts';

/**
 * A cascade (the descendants a cancelled or dead job takes with it) is settled in bounded
 * transactions: however deep the graph, no transaction sends more than a fixed number of statements.
 */
const db = useTestDatabase('cascade');

/** Most statements one transaction of a cascade may send (BEGIN and COMMIT not counted). */
const STATEMENTS_PER_TRANSACTION = 200;

/** Counts the statements each transaction on `knex` sends, by transaction, while `fn` runs. */
async function statementsPerTransaction(knex: Knex, fn: () => Promise<unknown>): Promise<number[]> {
  const counts = new Map<string, number>();
  const listener = (query: { sql: string; __knexTxId?: string }) => {
    if (query.__knexTxId === undefined || /^(BEGIN|COMMIT|ROLLBACK)/i.test(query.sql.trim())) return;
    counts.set(query.__knexTxId, (counts.get(query.__knexTxId) ?? 0) + 1);
  };
  knex.on('query', listener);
  try {
    await fn();
  } finally {
    knex.off('query', listener);
  }
  return [...counts.values()];
}

/** A chain of `length` jobs named `name`, each the child of the one before. */
function chain(length: number, name = 'link') {
  return Array.from({ length }, (_, i) => ({ name, ref: `l${i}`, parents: i === 0 ? [] : [`l${i - 1}`] }));
}

const HELD = "run_at = '9999-12-31 23:59:59.000'";

describe('a cascade', () => {
  it('cancelling the root of a 2,000-job chain: every link cancelled, each transaction bounded in statements', async () => {
    await db.sluice.enqueueBatch(chain(2_000));
    const [root] = await db.query<{ id: number }>('SELECT MIN(id) AS id FROM sluice_jobs');
    let result: { cancelled: number } | undefined;
    const started = performance.now();
    const perTransaction = await statementsPerTransaction(db.sluice.knex, async () => {
      result = await db.sluice.jobs.cancel(Number(root?.id));
    });
    const ms = Math.round(performance.now() - started);
    process.stdout.write(
      `cascade: ${perTransaction.length} transactions, ${perTransaction.reduce((a, b) => a + b, 0)} statements, most ${Math.max(...perTransaction)} in one, ${ms} ms\n`,
    );
    expect(result).toEqual({ cancelled: 2_000 });
    expect(await countRows(db, 'sluice_jobs')).toBe(0);
    expect(await countRows(db, 'sluice_job_edges')).toBe(0);
    expect(await countRows(db, 'sluice_job_holds')).toBe(0);
    expect(Math.max(...perTransaction)).toBeLessThanOrEqual(STATEMENTS_PER_TRANSACTION);
  });

  it("a worker dead-lettering a chain's root cancels a bounded part; reconcileHolds the rest, in bounded steps", async () => {
    const ran: number[] = [];
    const root = defineJob({
      name: 'root',
      maxRetries: 0,
      handle: () => {
        throw new Error('no luck');
      },
    });
    const link = defineJob({ name: 'link', handle: (_payload, ctx) => void ran.push(ctx.job.id) });
    await db.sluice.enqueueBatch([{ name: 'root', ref: 'l0' }, ...chain(200).slice(1)]);
    const perTransaction = await statementsPerTransaction(db.sluice.knex, () =>
      withWorker(db.sluice, [root, link], { concurrency: 2 }, () =>
        waitFor(async () => (await countRows(db, 'sluice_dead_jobs')) === 1, { what: 'the root to die' }),
      ),
    );
    process.stdout.write(`dead root: most ${Math.max(...perTransaction)} statements in one transaction\n`);
    expect(Math.max(...perTransaction)).toBeLessThanOrEqual(STATEMENTS_PER_TRANSACTION);
    // The root's transaction cancelled CASCADE_LEVELS levels; the rest wait, held, their parent cancelled.
    expect(await countRows(db, 'sluice_job_history', "outcome = 'cancelled'")).toBe(CASCADE_LEVELS);
    expect(await countRows(db, 'sluice_jobs', HELD)).toBe(199 - CASCADE_LEVELS);
    const [frontier] = await db.query<{ id: number }>('SELECT MIN(id) AS id FROM sluice_jobs');
    const workflow = (await db.sluice.jobs.get(Number(frontier?.id)))?.workflow;
    expect(workflow?.parents.map((p) => p.outcome)).toEqual(['cancelled']);

    const reconciler = reconcileHolds(
      { db: fromKnex(db.sluice.knex), tables: db.sluice.tables },
      { cancel: { history: true, keyRetentionMs: 0 } },
    );
    let counts: unknown;
    const reconciling = await statementsPerTransaction(db.sluice.knex, async () => {
      counts = await reconciler.runOnce();
    });
    expect(counts).toEqual({ settled: 0, released: 0, cancelled: 199 - CASCADE_LEVELS });
    process.stdout.write(
      `reconcile: ${reconciling.length} transactions, most ${Math.max(...reconciling)} statements in one\n`,
    );
    expect(Math.max(...reconciling)).toBeLessThanOrEqual(STATEMENTS_PER_TRANSACTION);
    expect(await countRows(db, 'sluice_jobs')).toBe(0);
    expect(await countRows(db, 'sluice_job_edges')).toBe(0);
    expect(ran).toEqual([]);
  });
});
