import { beforeAll, describe, expect, it } from 'vitest';
import type { JobSpec, Sluice } from '../../src/index.ts';
import { encodeCursor } from '../../src/jobControl/jobCursor.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * Every query of the jobs API — what the CLI and the dashboard read — is served by an index:
 * each statement a listing, a count, a lookup, a cancel or a change poll sends is EXPLAINed
 * against 100,000 live jobs, 50,000 history rows and 20,000 dead jobs (ANALYZEd, so the optimizer
 * plans as on a big table), and must name the expected index, never scan a table (type ALL) and
 * never sort (filesort / temporary). The server's own counters (Handler_read_* and, on MariaDB,
 * Handler_icp_attempts) then show what one page really reads: a page from deep inside a range
 * starts at its cursor, not at the start of the range (MariaDB picks `ref` on the leading
 * columns over the keyset's `range` unless the index is forced, and then reads every entry
 * before the cursor).
 */
const db = useTestDatabase('jobs_index', { truncate: false });

interface Statement {
  readonly sql: string;
  readonly bindings: readonly unknown[];
}

interface PlanRow {
  id: number;
  select_type: string;
  table: string | null;
  type: string | null;
  key: string | null;
  rows: number | string | null;
  Extra: string | null;
}

let probe: Sluice;
let batchId: number;

beforeAll(async () => {
  const sluice = db.sluice;
  const now = Date.now();
  const big: JobSpec[] = [];
  for (let i = 0; i < 60_000; i++) {
    big.push({
      name: i % 7 === 0 ? 'rare' : 'common',
      queue: 'big',
      priority: i % 3,
      ...(i % 3 === 2 ? { delayMs: 3_600_000 + i } : { runAt: new Date(now - 600_000 + i) }),
    });
  }
  await sluice.enqueueBatch(big);
  await sluice.enqueueBatch(
    Array.from({ length: 30_000 }, (_, i) => ({ name: 'send', queue: 'mail', priority: i % 2 })),
  );
  batchId = (await sluice.enqueueBatch(Array.from({ length: 10_000 }, () => ({ name: 'part', queue: 'parts' }))))
    .batchId as number;
  // Some fail and wait out a backoff; some run.
  await db.query(
    "UPDATE sluice_jobs SET retry_times = 1, run_at = NOW(3) + INTERVAL 1 HOUR, last_error = 'Error: x' WHERE id % 50 = 0",
  );
  await db.query(
    "UPDATE sluice_jobs SET lock_id = CONCAT('host-1~abcd1234.', id % 20), locked_at = NOW(3) WHERE id % 97 = 0",
  );
  const historyColumns =
    'job_id, queue, name, payload, priority, retry_times, batch_id, created_at, started_at, finished_at, outcome, result';
  await db.query(
    `INSERT INTO sluice_job_history (${historyColumns})
     SELECT id + 1000000, queue, name, payload, priority, 0, batch_id, created_at, NOW(3) - INTERVAL id SECOND,
            NOW(3) - INTERVAL id SECOND, IF(id % 10 = 0, 'cancelled', 'completed'), '{"ok":true}'
     FROM sluice_jobs ORDER BY id LIMIT 50000`,
  );
  await db.query(
    `INSERT INTO sluice_dead_jobs (id, queue, name, payload, priority, retry_times, batch_id, last_error, created_at, failed_at)
     SELECT id + 2000000, queue, name, payload, priority, 4, batch_id, 'Error: dead', created_at, NOW(3) - INTERVAL id SECOND
     FROM sluice_jobs ORDER BY id DESC LIMIT 20000`,
  );
  for (const table of ['sluice_jobs', 'sluice_job_history', 'sluice_dead_jobs', 'sluice_batches']) {
    await db.query(`ANALYZE TABLE ${table}`);
  }
  // One connection: EXPLAIN and the session's counters see exactly what the probe's statements did.
  probe = db.open({ poolMax: 1 });
}, 300_000);

/** Runs `fn` on the probe install and returns the statements it sent, and the index entries they read. */
async function traced(fn: (sluice: Sluice) => Promise<unknown>): Promise<{ statements: Statement[]; read: number }> {
  const statements: Statement[] = [];
  const listener = (q: { sql: string; bindings?: unknown[] }) =>
    statements.push({ sql: q.sql, bindings: q.bindings ?? [] });
  const before = await counters();
  probe.knex.on('query', listener);
  try {
    await fn(probe);
  } finally {
    probe.knex.off('query', listener);
  }
  const after = await counters();
  return { statements, read: after - before };
}

/** Index entries read by this session so far (not table-scan reads: EXPLAIN catches those). */
async function counters(): Promise<number> {
  const [rows] = (await probe.knex.raw(
    "SHOW SESSION STATUS WHERE Variable_name IN ('Handler_read_key', 'Handler_read_next', 'Handler_read_prev', 'Handler_read_first', 'Handler_read_last', 'Handler_icp_attempts')",
  )) as [{ Variable_name: string; Value: string }[]];
  return rows.reduce((sum, r) => sum + Number(r.Value), 0);
}

async function explain(statement: Statement): Promise<PlanRow[]> {
  const [rows] = (await probe.knex.raw(`EXPLAIN ${statement.sql}`, statement.bindings as never[])) as [PlanRow[]];
  return rows;
}

/** EXPLAINs every statement: each table read names one of `keys`, none is a scan or a sort. */
async function expectIndexed(statements: Statement[], keys: readonly string[]): Promise<void> {
  expect(statements.length).toBeGreaterThan(0);
  // A listing asks the server's plan first (listQueueNames): that EXPLAIN reads nothing.
  for (const statement of statements.filter((s) => !/^\s*EXPLAIN\b/.test(s.sql))) {
    const plan = await explain(statement);
    const summary = plan.map((r) => `${r.table}:${r.type}:${r.key}:${r.rows}:${r.Extra}`).join(' | ');
    process.stdout.write(`EXPLAIN ${statement.sql.replace(/\s+/g, ' ').trim().slice(0, 140)}…\n  → ${summary}\n`);
    for (const row of plan) {
      // Derived tables hold a bounded handful of rows (a listing's walk groups at most WALK_ENTRIES).
      if (row.table === null || row.table.startsWith('<')) continue;
      expect(row.Extra ?? '', `${summary}\n${statement.sql}`).not.toMatch(/filesort|temporary/i);
      expect(row.type, `${summary}\n${statement.sql}`).not.toBe('ALL');
      expect(keys, `${summary}\n${statement.sql}`).toContain(row.key);
    }
  }
}

/** A cursor into the middle of a segment (what page 200 of a listing would pass). */
async function deepCursor(segment: (string | number)[], sql: string, params: unknown[]): Promise<string> {
  const [row] = await db.query<Record<string, Date | number>>(sql, params);
  return encodeCursor({ segment, key: Object.values(row as Record<string, Date | number>) });
}

const HEAD = ['ix_head'];

describe('every query of the jobs API is served by an index', () => {
  it('lists and counts the live jobs of a queue, state by state, from the start and from deep inside', async () => {
    for (const state of [undefined, 'waiting', 'delayed', 'held', 'retrying', 'running'] as const) {
      const first = await traced((s) => s.jobs.list({ queue: 'big', state }, { limit: 50 }));
      await expectIndexed(first.statements, HEAD);
      const count = await traced((s) => s.jobs.count({ queue: 'big', state }, { max: 1_000 }));
      await expectIndexed(count.statements, HEAD);
      expect(count.read, `count ${state}`).toBeLessThan(3 * 1_000 + 50);
    }
    const deep = await deepCursor(
      ['big', 'f', 1],
      "SELECT run_at, id FROM sluice_jobs WHERE queue = 'big' AND lock_id = '' AND priority = 1 ORDER BY run_at, id LIMIT 1 OFFSET 15000",
      [],
    );
    const page = await traced((s) => s.jobs.list({ queue: 'big' }, { limit: 50, after: deep }));
    await expectIndexed(page.statements, HEAD);
    // 50 rows from 15,000 entries into the range: read from the cursor on.
    expect(page.read).toBeLessThan(400);
    const waiting = await traced((s) => s.jobs.list({ queue: 'big', state: 'waiting' }, { limit: 50, after: deep }));
    expect(waiting.read).toBeLessThan(400);
    // A quarter into a range: the optimizer, left alone, reads the first quarter again.
    const early = await deepCursor(
      ['big', 'f', 0],
      "SELECT run_at, id FROM sluice_jobs WHERE queue = 'big' AND lock_id = '' AND priority = 0 ORDER BY run_at, id LIMIT 1 OFFSET 5000",
      [],
    );
    const earlyPage = await traced((s) => s.jobs.list({ queue: 'big' }, { limit: 50, after: early }));
    await expectIndexed(earlyPage.statements, HEAD);
    expect(earlyPage.read).toBeLessThan(400);
  });

  it('lists the live jobs of every queue, of a batch, and by name within a bounded scan', async () => {
    for (const state of [undefined, 'waiting', 'running'] as const) {
      const all = await traced((s) => s.jobs.list({ state }, { limit: 50 }));
      await expectIndexed(all.statements, HEAD);
    }
    const batch = await traced((s) => s.jobs.list({ batchId }, { limit: 50 }));
    await expectIndexed(batch.statements, ['ix_batch']);
    expect(batch.read).toBeLessThan(400);
    const batchCount = await traced((s) => s.jobs.count({ batchId }, { max: 100_000 }));
    await expectIndexed(batchCount.statements, ['ix_batch']);

    const rare = await traced((s) => s.jobs.list({ queue: 'big', name: 'rare' }, { limit: 50, scanLimit: 2_000 }));
    await expectIndexed(rare.statements, HEAD);
    const scarce = await traced((s) =>
      s.jobs.list({ queue: 'big', name: 'no-such-name' }, { limit: 50, scanLimit: 2_000 }),
    );
    // A name no job has: the page stops at its scan bound and says where to go on.
    expect(scarce.read).toBeLessThan(3 * 2_000 + 100);
  });

  it('lists and counts history and dead jobs newest first, by queue, batch and time', async () => {
    const since = new Date(Date.now() - 3_600_000);
    for (const filter of [
      { state: 'completed' },
      { state: 'cancelled', queue: 'mail' },
      { state: 'completed', from: since },
      { state: 'completed', batchId },
    ] as const) {
      const page = await traced((s) => s.jobs.list(filter, { limit: 50 }));
      await expectIndexed(page.statements, ['ix_finished', 'PRIMARY']);
      const count = await traced((s) => s.jobs.count(filter, { max: 1_000 }));
      await expectIndexed(count.statements, ['ix_finished', 'PRIMARY']);
    }
    const dead = await traced((s) => s.jobs.list({ state: 'dead' }, { limit: 50 }));
    await expectIndexed(dead.statements, ['ix_failed']);
    const deadQueue = await traced((s) => s.jobs.list({ state: 'dead', queue: 'parts' }, { limit: 50 }));
    await expectIndexed(deadQueue.statements, ['ix_queue_failed']);
    const deadBatch = await traced((s) => s.jobs.list({ state: 'dead', batchId }, { limit: 50 }));
    await expectIndexed(deadBatch.statements, ['ix_batch']);
    const deep = await deepCursor(
      ['h'],
      'SELECT finished_at, job_id FROM sluice_job_history ORDER BY finished_at DESC, job_id DESC LIMIT 1 OFFSET 30000',
      [],
    );
    const deepPage = await traced((s) => s.jobs.list({ state: 'completed' }, { limit: 50, after: deep }));
    await expectIndexed(deepPage.statements, ['ix_finished']);
    expect(deepPage.read).toBeLessThan(400);
  });

  it('looks up, waits for, polls changes and cancels by primary key and time index', async () => {
    const [{ id }] = (await db.query<{ id: number }>('SELECT id FROM sluice_jobs ORDER BY id LIMIT 1')) as [
      { id: number },
    ];
    const get = await traced((s) => s.jobs.get(Number(id) + 1_000_000));
    // job_edges and job_graph_history: whether the job is in a workflow, by their primary keys'
    // prefixes, ix_child or ix_parent.
    await expectIndexed(get.statements, ['PRIMARY', 'ix_child', 'ix_parent']);
    const wait = await traced((s) => s.jobs.waitFor(Number(id) + 1_000_000, { timeoutMs: 0 }));
    await expectIndexed(wait.statements, ['PRIMARY']);
    const changes = await traced((s) => s.jobs.changes({ since: new Date(Date.now() - 600_000), limit: 100 }));
    await expectIndexed(
      changes.statements.filter((st) => st.sql.includes('ORDER BY')),
      ['ix_finished', 'ix_failed'],
    );
    const runNow = await traced((s) => s.jobs.runNow([Number(id)]));
    await expectIndexed(runNow.statements, ['PRIMARY']);
  });
});
