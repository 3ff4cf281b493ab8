import { Writable } from 'node:stream';
import { pino } from 'pino';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { basicAuth } from '../../src/index.ts';
import { createFixtureTables } from '../fixtures/fixtureTables.ts';
import { screenshot, useBrowser } from '../helpers/browser.ts';
import { useDashboard } from '../helpers/dashboardServer.ts';
import { countRows } from '../helpers/factory.ts';
import { spawnWorker } from '../helpers/spawnSluice.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';

/**
 * The dashboard's actions, clicked in a real Chromium, against real `sluice work` processes:
 * pausing a queue stops a running worker from claiming it (and resuming lets it), cancelling a
 * running job stops it in its worker, re-driving a dead job runs it; a destructive action whose
 * confirmation is dismissed does nothing, and one posted without confirmation is refused; every
 * action is logged with who, what and how many.
 */
const db = useTestDatabase('dashboard_actions');
const OPS = { username: 'ops', password: 'pw-actions-0f3a' };
const logged: Record<string, unknown>[] = [];
const logger = pino(
  { level: 'info' },
  new Writable({
    write(chunk, _encoding, done) {
      logged.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      done();
    },
  }),
);
const dashboard = useDashboard(() => db.sluice, { auth: basicAuth({ user: 'ops', password: OPS.password }), logger });
const browser = useBrowser(OPS);
const QUEUES = 'held,open,cx,rd';

beforeAll(() => createFixtureTables(db));

function startWorker() {
  return spawnWorker(db.url, { queues: QUEUES, concurrency: 4, heartbeatIntervalMs: 1_000, pollIntervalMs: 100 });
}

/** Accepts (or dismisses) the next confirmation and clicks the action's button (a bulk one: of that scope). */
async function click(
  page: Page,
  action: string,
  confirm: 'accept' | 'dismiss' | null = null,
  row?: string,
  scope?: 'selected' | 'matching',
) {
  const questions: string[] = [];
  const handler = (dialog: import('playwright-core').Dialog) => {
    questions.push(dialog.message());
    void (confirm === 'accept' ? dialog.accept() : dialog.dismiss());
  };
  page.once('dialog', handler);
  const within = row ? page.locator(row) : page;
  await within.locator(`button[data-action="${action}"]${scope ? `[data-scope="${scope}"]` : ''}`).click();
  if (confirm === null) page.off('dialog', handler);
  return questions;
}

const recordsOf = (n: number) => countRows(db, 'test_effects', 'n = ?', [n]);
const actionLog = (action: string) => logged.filter((l) => l.event === 'dashboard:action' && l.action === action);

describe('dashboard actions against real worker processes', () => {
  it('pausing a queue from the page stops a running worker from claiming it; resuming lets it run', async () => {
    const worker = startWorker();
    await worker.ready;
    const page = await browser.page();
    await page.goto(`${dashboard.url}/queues/held`);
    await click(page, 'pause-queue');
    await page.waitForSelector('.notice:has-text("Queue held paused")');
    expect(await page.textContent('.queue-status')).toContain('Paused');
    expect(actionLog('pause-queue')).toMatchObject([{ user: 'ops', target: { queue: 'held' }, count: 1 }]);

    await db.sluice.enqueueBatch([1, 2, 3].map((n) => ({ name: 'record', queue: 'held', payload: { n } })));
    // The worker keeps claiming from its other queue, round after round, and never from the paused one.
    for (let round = 100; round < 103; round++) {
      await db.sluice.enqueue({ name: 'record', queue: 'open', payload: { n: round } });
      await waitFor(async () => (await recordsOf(round)) === 1, { what: `open job ${round}` });
      expect(await countRows(db, 'sluice_jobs', "queue = 'held' AND lock_id = '' AND retry_times = 0")).toBe(3);
    }
    expect(await countRows(db, 'test_effects', 'n < 100')).toBe(0);
    await page.reload();
    await screenshot(page, 'queue-paused');

    await click(page, 'resume-queue');
    await page.waitForSelector('.notice:has-text("Queue held resumed")');
    await waitFor(async () => (await countRows(db, 'test_effects', 'n < 100')) === 3, {
      what: 'the held jobs, resumed',
    });
    expect((await worker.stop()).code).toBe(0);
  });

  it('cancelling a running job from the page stops it in its worker — only once confirmed', async () => {
    const worker = startWorker();
    await worker.ready;
    const { id } = await db.sluice.enqueue({ name: 'cancellable', queue: 'cx' });
    await waitFor(async () => (await countRows(db, 'test_starts')) === 1, { what: 'the job started' });
    const page = await browser.page();
    // The workers page shows the worker from the registry and the job it holds.
    await page.goto(`${dashboard.url}/workers`);
    const row = page.locator(`tr[data-worker-pid="${worker.pid}"]`);
    expect(await row.locator('td.held a').allTextContents()).toEqual([String(id)]);
    expect(await row.textContent()).toContain('held, open, cx, rd');
    await screenshot(page, 'workers-live');
    await page.goto(`${dashboard.url}/jobs/${id}`);
    await expect.poll(async () => page.getAttribute('[data-state]', 'data-state')).toBe('running');
    expect(await page.textContent('[data-field="lock"]')).toContain(`pid ${worker.pid}`);

    // Dismissed: no request is sent, the job runs on.
    expect(await click(page, 'cancel-job', 'dismiss')).toEqual([`Cancel job ${id} (its worker stops it)?`]);
    // Posted without the confirmation (as a script or a stale form would): refused, nothing done.
    const csrf = await page.inputValue('form[action$="/actions/cancel-job"] input[name="csrf"]');
    const forged = await page.request.post(`${dashboard.url}/actions/cancel-job`, {
      form: { csrf, id: String(id), return: '/' },
      maxRedirects: 0,
    });
    expect(forged.status()).toBe(400);
    expect(await forged.text()).toContain('was not confirmed: nothing was done');
    expect((await db.sluice.jobs.get(id))?.state).toBe('running');
    expect(await countRows(db, 'test_aborts')).toBe(0);
    expect(actionLog('cancel-job')).toEqual([]);
    await screenshot(page, 'job-running');

    await click(page, 'cancel-job', 'accept');
    await page.waitForSelector(`.notice:has-text("Job ${id} cancelled")`);
    await worker.waitForLine((l) => l.event === 'job:cancelled' && l.jobId === id, 30_000, 'the worker stopped it');
    const [abort] = await db.query<{ pid: number; code: string }>('SELECT pid, code FROM test_aborts');
    expect(abort).toEqual({ pid: worker.pid, code: 'SLUICE_JOB_CANCELLED' });
    await page.reload();
    expect(await page.getAttribute('[data-state]', 'data-state')).toBe('cancelled');
    expect(actionLog('cancel-job')).toMatchObject([{ user: 'ops', target: { id: String(id) }, count: 1 }]);
    expect((await worker.stop()).code).toBe(0);
  });

  it('retrying a dead job from the page re-drives it and runs it; purging needs a confirmation', async () => {
    const worker = startWorker();
    await worker.ready;
    for (const [id, n] of [
      [900_001, 42],
      [900_002, 43],
    ] as const) {
      await db.query(
        `INSERT INTO sluice_dead_jobs (id, queue, name, payload, priority, retry_times, max_retries, last_error, created_at, failed_at)
         VALUES (?, 'rd', 'record', ?, 0, 4, 3, 'Error: upstream down', NOW(3), NOW(3))`,
        [id, JSON.stringify({ n })],
      );
    }
    const page = await browser.page();
    await page.goto(`${dashboard.url}/dead?queue=rd`);
    await click(page, 'redrive-dead-job', null, 'tr[data-job-id="900001"]');
    await page.waitForSelector('.notice:has-text("Dead job 900001 retried: re-driven as a new job.")');
    await waitFor(async () => (await recordsOf(42)) === 1, { what: 'the re-driven job ran' });
    const dead = await db.sluice.jobs.get(900_001);
    expect(dead?.redrivenAs).not.toBeNull();
    await waitFor(async () => (await db.sluice.jobs.get(dead?.redrivenAs as number))?.state === 'completed', {
      what: 'the new job completed',
    });

    await page.goto(`${dashboard.url}/dead?queue=rd`);
    expect(await click(page, 'purge-jobs', 'dismiss', '#bulk', 'matching')).toEqual([
      'Purge for good: every job matching state dead, queue rd, up to the first 1,000?',
    ]);
    expect(await countRows(db, 'sluice_dead_jobs', 'id = 900002')).toBe(1);
    await page.locator('tr[data-job-id="900002"] input[type="checkbox"]').check();
    await click(page, 'purge-jobs', 'accept', '#bulk', 'selected');
    await page.waitForSelector('.notice:has-text("1 of 1 job(s) purged.")');
    expect(await countRows(db, 'sluice_dead_jobs', 'id = 900002')).toBe(0);
    expect(await countRows(db, 'sluice_dead_jobs', 'id = 900001')).toBe(1); // re-driven rows stay as history
    expect(await recordsOf(43)).toBe(0);
    expect(actionLog('purge-jobs')).toMatchObject([
      { user: 'ops', target: { scope: 'selected', ids: ['900002'], selected: 1 }, count: 1 },
    ]);
    expect((await worker.stop()).code).toBe(0);
  });
});
