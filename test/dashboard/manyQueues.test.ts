import { describe, expect, it } from 'vitest';
import { useDashboard } from '../helpers/dashboardServer.ts';
import { statementsOf } from '../helpers/statementsOf.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * 5,000 queues with one job each (one in ten due, the others delayed; a few running), no worker:
 * every page and every call of the job-control API stays within a fixed number of statements,
 * whatever the number of queues — counted through knex's 'query' event, which sees every
 * statement sluice sends. Before the walks read queues and priorities in batches and stopped at a
 * statement bound, /workers sent 5,001 statements, /jobs?state=waiting 20,000, a count of the
 * waiting jobs 20,001.
 */
const db = useTestDatabase('many_queues', { truncate: false });
const dashboard = useDashboard(() => db.sluice, { auth: false });
const QUEUES = 5_000;
const BOUND = 120;

async function page(path: string): Promise<{ n: number; value: string }> {
  return statementsOf(db.sluice, async () => {
    const res = await fetch(`${dashboard.url}${path}`);
    expect(res.status, path).toBe(200);
    return res.text();
  });
}

describe('5,000 queues', () => {
  it('seeds one job per queue', async () => {
    await db.query(
      `INSERT INTO sluice_jobs (queue, name, payload, priority, run_at, lock_id, locked_at, created_at)
       SELECT CONCAT('q', LPAD(seq, 5, '0')), 'work', '{}', seq % 3,
              IF(seq % 10 = 0, NOW(3) - INTERVAL 1 SECOND, NOW(3) + INTERVAL 1 HOUR),
              IF(seq % 1000 = 1, CONCAT('h-1~t.', seq), ''), IF(seq % 1000 = 1, NOW(3), '1970-01-01 00:00:01'), NOW(3)
       FROM seq_1_to_${QUEUES}`,
    );
  });

  it('serves every page in a bounded number of statements', async () => {
    for (const path of [
      '/',
      '/workers',
      '/jobs',
      '/jobs?state=waiting',
      '/jobs?state=running',
      '/jobs?name=nomatch',
      '/failures',
      '/queues/q00010',
      '/queues/q00010?name=work',
    ]) {
      const { n } = await page(path);
      expect(n, path).toBeLessThanOrEqual(BOUND);
    }
    const overview = await page('/');
    // Issue 42's target for a page: at most 20 statements (26 before its counts went 250 ranges a
    // statement and the unknown jobs came from the worker listing already read).
    expect(overview.n).toBeLessThanOrEqual(20);
    expect(overview.value).toContain('data-queues-page="200"');
    expect(overview.value).toMatch(/href="[^"]*\?after=q00200" data-next-queues/);
    expect(overview.value).toContain('data-queue="q00200"');
    // The 4,800 queues past the 200th, summed in the last row (none of them dropped without a word).
    const others = /<tr data-queue="\(others\)"[\s\S]*?<\/tr>/.exec(overview.value)?.[0] ?? '';
    expect(others).toContain('4,800 more queues');
    const cells = Object.fromEntries([...others.matchAll(/data-count="([\w-]+)">([^<]*)</g)].map((m) => [m[1], m[2]]));
    expect(cells).toEqual({ ready: '480', 'not-due': '4,316', held: '0', running: '4', dead: '0' });
    // A queue's page, its charts included (history.throughput and history.timings: a statement each).
    const queue = await page('/queues/q00010');
    expect(queue.n).toBeLessThanOrEqual(20);
    expect(queue.value).toContain('data-series="queue-run-minutes"');
    // The next page of queues: the 200 after the first page's last.
    const next = await page('/?after=q00200');
    expect(next.n).toBeLessThanOrEqual(20);
    expect(next.value).toContain('data-queue="q00201"');
    expect(next.value).toContain('data-queue="q00400"');
    expect(next.value).not.toContain('data-queue="q00200"');
    expect(next.value).toContain('4,600 more queues');
    const workers = await page('/workers');
    expect(workers.value).not.toContain('Only the first');
    const waiting = await page('/jobs?state=waiting');
    expect(waiting.value).toContain('data-job-id=');
    expect(waiting.value).toContain('Next page');
  });

  it('answers list and count calls in a bounded number of statements', async () => {
    const nomatch = await statementsOf(db.sluice, () => db.sluice.jobs.list({ name: 'nomatch' }));
    expect(nomatch.n).toBeLessThanOrEqual(BOUND);
    expect(nomatch.value.jobs).toEqual([]);
    expect(nomatch.value.next).not.toBeNull();
    const running = await statementsOf(db.sluice, () => db.sluice.jobs.list({ state: 'running' }));
    expect(running.n).toBeLessThanOrEqual(BOUND);
    expect(running.value.jobs.map((j) => j.queue)).toEqual(['q00001', 'q01001', 'q02001', 'q03001', 'q04001']);
    const waiting = await statementsOf(db.sluice, () => db.sluice.jobs.count({ state: 'waiting' }));
    expect(waiting.n).toBeLessThanOrEqual(BOUND);
    expect(waiting.value).toEqual({ count: 500, exact: true });
    const live = await statementsOf(db.sluice, () => db.sluice.jobs.count({}));
    expect(live.n).toBeLessThanOrEqual(BOUND);
    expect(live.value.count).toBeGreaterThan(0);
  });

  it('pages through every waiting job, each page bounded', async () => {
    let after: string | undefined;
    let seen = 0;
    for (let pages = 0; pages < 200; pages++) {
      const { n, value } = await statementsOf(db.sluice, () => db.sluice.jobs.list({ state: 'waiting' }, { after }));
      expect(n).toBeLessThanOrEqual(BOUND);
      seen += value.jobs.length;
      if (value.next === null) break;
      after = value.next;
    }
    expect(seen).toBe(500);
  });
});
