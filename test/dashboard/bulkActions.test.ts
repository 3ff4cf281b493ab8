import type { Dialog, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { useBrowser } from '../helpers/browser.ts';
import { useDashboard } from '../helpers/dashboardServer.ts';
import { countRows, fromNow, HOUR, insertJob } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * Acting on many jobs from the dashboard, in a real Chromium: tick rows on a listing and cancel,
 * run now, retry or purge them, or act on every job matching the listing's filter — at most the
 * first 1,000, which the question and the notice say; each asks first, and retrying a finished
 * job runs it again as a new job its history row points at.
 */
const db = useTestDatabase('bulk_actions');
const dashboard = useDashboard(() => db.sluice, { auth: false });
const browser = useBrowser();

/** Answers the next question (recording it) and clicks a bulk button. */
async function bulk(page: Page, action: string, scope: 'selected' | 'matching', answer: 'accept' | 'dismiss') {
  const questions: string[] = [];
  const handler = (dialog: Dialog) => {
    questions.push(dialog.message());
    void (answer === 'accept' ? dialog.accept() : dialog.dismiss());
  };
  page.once('dialog', handler);
  await page.locator(`#bulk button[data-action="${action}"][data-scope="${scope}"]`).click();
  return questions;
}

const tick = (page: Page, id: number) =>
  page.locator(`tr[data-job-id="${id}"] input[type="checkbox"][name="id"]`).check();

/** A finished job in the history, as a worker's completion or a cancel leaves it. */
async function finished(id: number, outcome: 'completed' | 'cancelled', queue = 'bk', payload: unknown = { n: id }) {
  await db.query(
    `INSERT INTO sluice_job_history (job_id, queue, name, payload, retry_times, created_at, finished_at, outcome, priority, max_retries)
     VALUES (?, ?, 'record', ?, 1, NOW(3) - INTERVAL 1 MINUTE, NOW(3), ?, 3, 5)`,
    [id, queue, JSON.stringify(payload), outcome],
  );
}

describe('bulk actions on job listings', () => {
  it('runs the ticked delayed jobs now, only once confirmed, and says how many', async () => {
    const ids = [
      await insertJob(db, { queue: 'bk', runAt: fromNow(HOUR) }),
      await insertJob(db, { queue: 'bk', runAt: fromNow(HOUR) }),
      await insertJob(db, { queue: 'bk', runAt: fromNow(HOUR) }),
    ];
    const page = await browser.page();
    await page.goto(`${dashboard.url}/jobs?state=delayed&queue=bk`);
    await tick(page, ids[0] as number);
    await tick(page, ids[2] as number);
    expect(await page.textContent('#bulk .bulk-count')).toBe('2');
    expect(await bulk(page, 'run-jobs-now', 'selected', 'dismiss')).toEqual(['Run now: the 2 selected job(s)?']);
    expect(await countRows(db, 'sluice_jobs', "queue = 'bk' AND run_at <= NOW(3)")).toBe(0);
    await bulk(page, 'run-jobs-now', 'selected', 'accept');
    await page.waitForSelector('.notice:has-text("2 of 2 job(s) made due now.")');
    const due = await db.query<{ id: number }>("SELECT id FROM sluice_jobs WHERE queue = 'bk' AND run_at <= NOW(3)");
    expect(due.map((r) => Number(r.id)).sort()).toEqual([ids[0], ids[2]]);
  });

  it('cancels the ticked jobs of a queue page into the history', async () => {
    await insertJob(db, { queue: 'bk' });
    await insertJob(db, { queue: 'bk' });
    const page = await browser.page();
    await page.goto(`${dashboard.url}/queues/bk?state=waiting`);
    const rows = await page
      .locator('tr[data-job-id]')
      .evaluateAll((trs) => trs.map((tr) => Number(tr.getAttribute('data-job-id'))));
    expect(rows).toHaveLength(2);
    await page.locator('input.select-all').check();
    expect(await page.textContent('#bulk .bulk-count')).toBe('2');
    expect(await bulk(page, 'cancel-jobs', 'selected', 'accept')).toEqual(['Cancel: the 2 selected job(s)?']);
    await page.waitForSelector('.notice:has-text("2 of 2 job(s) cancelled.")');
    for (const id of rows) expect((await db.sluice.jobs.get(id))?.state).toBe('cancelled');
  });

  it('retries a completed job from its page as a new job that its history row names', async () => {
    await finished(800_001, 'completed', 'bk', { n: 1, to: 'a@example.com' });
    const page = await browser.page();
    await page.goto(`${dashboard.url}/jobs/800001`);
    const questions: string[] = [];
    page.once('dialog', (d) => {
      questions.push(d.message());
      void d.accept();
    });
    await page.locator('button[data-action="retry-jobs"]').click();
    await page.waitForSelector('.notice:has-text("1 of 1 job(s) retried.")');
    expect(questions).toEqual(['Retry job 800001: run it again as a new job?']);
    const old = await db.sluice.jobs.get(800_001);
    expect(old?.state).toBe('completed');
    const again = await db.sluice.jobs.get(old?.redrivenAs as number);
    expect(again).toMatchObject({ state: 'waiting', queue: 'bk', name: 'record', priority: 3, retryTimes: 0 });
    expect(again?.payload).toEqual({ n: 1, to: 'a@example.com' });
    expect(await page.textContent('dl.fields')).toContain(`retried as${old?.redrivenAs}`);
    // Retried once: the button is gone, and a second retry of the same row does nothing.
    expect(await page.locator('button[data-action="retry-jobs"]').count()).toBe(0);
    expect(await db.sluice.jobs.retry(800_001)).toEqual({ retried: 0 });
  });

  it('retries every cancelled job matching the filter, and purges the ticked dead ones', async () => {
    await finished(800_010, 'cancelled', 'rt');
    await finished(800_011, 'cancelled', 'rt');
    await finished(800_012, 'completed', 'rt');
    const page = await browser.page();
    await page.goto(`${dashboard.url}/jobs?state=cancelled&queue=rt`);
    expect(await bulk(page, 'retry-jobs', 'matching', 'accept')).toEqual([
      'Retry: every job matching state cancelled, queue rt, up to the first 1,000?',
    ]);
    await page.waitForSelector('.notice:has-text("2 of 2 job(s) retried.")');
    expect(await countRows(db, 'sluice_jobs', "queue = 'rt'")).toBe(2);
    expect(await countRows(db, 'sluice_job_history', "queue = 'rt' AND retried_as IS NOT NULL")).toBe(2);

    for (const id of [800_020, 800_021, 800_022])
      await db.query(
        `INSERT INTO sluice_dead_jobs (id, queue, name, payload, priority, retry_times, max_retries, last_error, created_at, failed_at)
         VALUES (?, 'pg', 'record', '{}', 0, 4, 3, 'Error: down', NOW(3), NOW(3))`,
        [id],
      );
    await page.goto(`${dashboard.url}/dead?queue=pg`);
    expect(await page.locator('tr[data-job-id="800020"] button[data-action="redrive-dead-job"]').textContent()).toBe(
      'Retry',
    );
    await tick(page, 800_020);
    await tick(page, 800_022);
    expect(await bulk(page, 'purge-jobs', 'selected', 'accept')).toEqual(['Purge for good: the 2 selected job(s)?']);
    await page.waitForSelector('.notice:has-text("2 of 2 job(s) purged.")');
    expect(
      (await db.query<{ id: number }>("SELECT id FROM sluice_dead_jobs WHERE queue = 'pg'")).map((r) => Number(r.id)),
    ).toEqual([800_021]);
  });

  it('acts on at most the first 1,000 matching jobs, in bounded statements, and says more may match', async () => {
    await db.query(
      `INSERT INTO sluice_job_history (job_id, queue, name, payload, retry_times, created_at, finished_at, outcome)
       SELECT 810000 + seq, 'many', 'record', '{}', 0, NOW(3), NOW(3) - INTERVAL seq SECOND, 'cancelled' FROM seq_1_to_1200`,
    );
    const page = await browser.page();
    await page.goto(`${dashboard.url}/jobs?state=cancelled&queue=many`);
    let statements = 0;
    const count = () => {
      statements++;
    };
    db.sluice.knex.on('query', count);
    try {
      await bulk(page, 'purge-jobs', 'matching', 'accept');
      await page.waitForSelector(
        '.notice:has-text("1000 of the first 1000 matching job(s) purged; more may match: run it again for the next ones.")',
      );
    } finally {
      db.sluice.knex.off('query', count);
    }
    expect(await countRows(db, 'sluice_job_history', "queue = 'many'")).toBe(200);
    // The list read, two transactions of the history's purge, one of the dead jobs' — and the page it returns to.
    expect(statements).toBeLessThanOrEqual(60);
  });

  it('refuses a bulk action posted without its confirmation or with no job ticked', async () => {
    const id = await insertJob(db, { queue: 'nc' });
    const page = await browser.page();
    await page.goto(`${dashboard.url}/jobs?queue=nc`);
    const csrf = await page.inputValue('#bulk input[name="csrf"]');
    const post = (form: Record<string, string>) =>
      page.request.post(`${dashboard.url}/actions/cancel-jobs`, {
        form: { csrf, return: '/', ...form },
        maxRedirects: 0,
      });
    const unconfirmed = await post({ id: String(id) });
    expect(unconfirmed.status()).toBe(400);
    expect(await unconfirmed.text()).toContain('was not confirmed: nothing was done');
    const none = await post({ confirmed: 'yes' });
    expect(none.status()).toBe(400);
    expect(await none.text()).toContain('select at least one job');
    expect((await db.sluice.jobs.get(id))?.state).toBe('waiting');
    // Nothing ticked: the browser asks for a selection and sends nothing.
    const said: string[] = [];
    page.once('dialog', (d) => {
      said.push(d.message());
      void d.dismiss();
    });
    await page.locator('#bulk button[data-action="cancel-jobs"][data-scope="selected"]').click();
    await expect.poll(() => said).toEqual(['Select one or more jobs first.']);
    expect((await db.sluice.jobs.get(id))?.state).toBe('waiting');
  });
});
