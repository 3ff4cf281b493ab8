import { describe, expect, it } from 'vitest';
import { GROUPS_PER_STATEMENT } from '../../src/groups/settleGroup.ts';
import { countRows } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * docs/flow-control.md, "how it scales": a change to many groups at once (a batch's enqueue, a
 * completion or a cancel of jobs of many groups) settles them in a few statements per
 * GROUPS_PER_STATEMENT groups, not a handful per group, and every group's slot still passes to its
 * own next held job.
 */
const db = useTestDatabase('settle_many_groups');
const HELD = '9999-12-31 23:59:59.000';
const GROUPS = GROUPS_PER_STATEMENT + 100;

describe('settling many groups at once', () => {
  it(`enqueue and cancel over ${GROUPS} groups of limit 1: a few statements per ${GROUPS_PER_STATEMENT} groups, each slot handed on`, async () => {
    const { sluice } = db;
    const statements: string[] = [];
    sluice.knex.on('query', (q: { sql: string }) => statements.push(q.sql));
    const onGroups = () => statements.filter((s) => /job_groups|job_holds/.test(s)).length;

    // Two jobs per group, limit 1: the first of each starts, the second is held.
    const jobs = Array.from({ length: 2 * GROUPS }, (_, n) => ({
      name: 'step',
      queue: 'q',
      group: `g${n % GROUPS}`,
      groupLimits: { concurrency: 1 },
      payload: { n },
    }));
    await sluice.enqueueBatch(jobs);
    // Hold rows (2 INSERTs) and the settle: 6 statements per chunk of groups, 2 chunks.
    expect(onGroups()).toBeLessThanOrEqual(20);
    const held = await db.query<{ n: number }>(`SELECT COUNT(*) AS n FROM sluice_jobs WHERE run_at = '${HELD}'`);
    expect(Number(held[0]?.n)).toBe(GROUPS);
    const active = await db.query<{ g: number; a: number }>(
      'SELECT COUNT(*) AS g, SUM(active) AS a FROM sluice_job_groups WHERE queue = ?',
      ['q'],
    );
    expect({ groups: Number(active[0]?.g), active: Number(active[0]?.a) }).toEqual({ groups: GROUPS, active: GROUPS });

    // Cancel each group's free job: each group's slot passes to its held job, in its own group.
    const free = await db.query<{ id: number }>(`SELECT id FROM sluice_jobs WHERE run_at <> '${HELD}' ORDER BY id`);
    statements.length = 0;
    expect((await sluice.jobs.cancel(free.map((r) => Number(r.id)))).cancelled).toBe(GROUPS);
    // Per transaction of 500 cancels: the holds' check, then a settle of up to 2 chunks.
    expect(onGroups()).toBeLessThanOrEqual(30);
    const rows = await db.query<{ n: number; group_key: string; held: number }>(
      `SELECT JSON_EXTRACT(payload, '$.n') AS n, group_key, run_at = '${HELD}' AS held FROM sluice_jobs`,
    );
    expect(rows).toHaveLength(GROUPS);
    for (const row of rows) {
      expect(Number(row.held), `job ${row.n}`).toBe(0);
      expect(row.group_key).toBe(`g${Number(row.n) % GROUPS}`);
    }
    expect(await countRows(db, 'sluice_job_holds')).toBe(0);
    const after = await db.query<{ a: number; most: number }>(
      'SELECT SUM(active) AS a, MAX(active) AS most FROM sluice_job_groups WHERE queue = ?',
      ['q'],
    );
    expect({ active: Number(after[0]?.a), most: Number(after[0]?.most) }).toEqual({ active: GROUPS, most: 1 });
  });

  it(`a batch over ${GROUPS} groups of a fair queue reads their policy in a few statements`, async () => {
    const { sluice } = db;
    await sluice.queues.setLimits('fair', { fair: true, fairWindow: 2 });
    const statements: string[] = [];
    sluice.knex.on('query', (q: { sql: string }) => statements.push(q.sql));
    const jobs = Array.from({ length: 2 * GROUPS }, (_, n) => ({
      name: 'step',
      queue: 'fair',
      group: `g${n % GROUPS}`,
      payload: { n },
    }));
    await sluice.enqueueBatch(jobs);
    // Own limits read per 500 groups, the rates' read, hold rows, and the settle.
    expect(statements.filter((s) => /job_groups|job_holds/.test(s)).length).toBeLessThanOrEqual(25);
    const held = await db.query<{ n: number }>(`SELECT COUNT(*) AS n FROM sluice_jobs WHERE run_at = '${HELD}'`);
    // A window of 2: both jobs of every group are released.
    expect(Number(held[0]?.n)).toBe(0);
  });

  it(`a batch over ${GROUPS} groups with limits that do not bind releases them in a few statements`, async () => {
    const { sluice } = db;
    const statements: string[] = [];
    sluice.knex.on('query', (q: { sql: string }) => statements.push(q.sql));
    const jobs = Array.from({ length: GROUPS }, (_, n) => ({
      name: 'step',
      queue: 'wide',
      group: `g${n}`,
      groupLimits: { concurrency: 1_000_000 },
      payload: { n },
    }));
    await sluice.enqueueBatch(jobs);
    expect(statements.filter((s) => /job_groups|job_holds/.test(s)).length).toBeLessThanOrEqual(20);
    const held = await db.query<{ n: number }>(`SELECT COUNT(*) AS n FROM sluice_jobs WHERE run_at = '${HELD}'`);
    expect(Number(held[0]?.n)).toBe(0);
  });
});
