import { describe, expect, it, onTestFinished } from 'vitest';
import { basicAuth, defineJob } from '../../src/index.ts';
import { docsShot, screenshot, useBrowser } from '../helpers/browser.ts';
import { useDashboard } from '../helpers/dashboardServer.ts';
import { ago, fromNow, insertJob, MINUTE } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * The dashboard's pages in a real Chromium against the real server: the overview's counts are the
 * database's (counted here with plain SQL), every page renders, values are escaped (a payload
 * carrying <script> shows as text and runs nothing), secrets in payloads are masked, the data
 * refreshes by itself, charts draw from the package's own uPlot with no request leaving loopback.
 * A screenshot of each page is saved under test-artifacts/dashboard/; the overview and a job's
 * page also go to docs/ (README) when missing or when SLUICE_DOCS_SCREENSHOTS=1.
 */
const db = useTestDatabase('dashboard_pages');
const OPS = { username: 'ops', password: 'correct horse battery staple' };
const nightly = defineJob({ name: 'nightly-report', queue: 'reports', schedule: '0 3 * * *', handle: () => undefined });
const dashboard = useDashboard(() => db.sluice, {
  auth: basicAuth({ user: OPS.username, password: OPS.password }),
  jobs: [nightly],
  refreshMs: 600,
});
const browser = useBrowser(OPS);
const XSS = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">';

/** Per queue and state, counted with plain SQL on the DB clock (not through sluice). */
async function sqlCounts(): Promise<Record<string, Record<string, number>>> {
  const live = await db.query<{ queue: string; state: string; n: number }>(`
    SELECT queue, CASE WHEN lock_id <> '' THEN 'running' WHEN run_at <= NOW(3) THEN 'waiting'
                       WHEN retry_times > 0 THEN 'retrying' ELSE 'delayed' END AS state, COUNT(*) AS n
    FROM sluice_jobs GROUP BY queue, state`);
  const dead = await db.query<{ queue: string; n: number }>(
    'SELECT queue, COUNT(*) AS n FROM sluice_dead_jobs WHERE redriven_at IS NULL GROUP BY queue',
  );
  const out: Record<string, Record<string, number>> = {};
  const at = (q: string) => (out[q] ??= { ready: 0, 'not-due': 0, running: 0, dead: 0 });
  const column: Record<string, string> = {
    waiting: 'ready',
    delayed: 'not-due',
    retrying: 'not-due',
    running: 'running',
  };
  for (const r of live) {
    const counts = at(r.queue);
    const key = column[r.state] as string;
    counts[key] = (counts[key] ?? 0) + Number(r.n);
  }
  for (const r of dead) at(r.queue).dead = Number(r.n);
  return out;
}

async function insertDead(queue: string, name: string, payload: unknown, error: string): Promise<number> {
  const [row] = await db.query<{ id: number }>('SELECT COALESCE(MAX(id), 0) + 1000 AS id FROM sluice_jobs');
  const id = Number(row?.id ?? 1000) + Math.floor(Math.random() * 1000);
  await db.query(
    `INSERT INTO sluice_dead_jobs (id, queue, name, payload, priority, retry_times, max_retries, last_error, created_at, failed_at)
     VALUES (?, ?, ?, ?, 0, 3, 3, ?, NOW(3) - INTERVAL 5 MINUTE, NOW(3) - INTERVAL 1 MINUTE)`,
    [id, queue, name, JSON.stringify(payload), error],
  );
  return id;
}

describe('dashboard pages in a browser', () => {
  it('shows the database’s counts per queue, every page, escaped and masked values, and refreshes itself', async () => {
    for (let i = 0; i < 3; i++) await insertJob(db, { queue: 'mail', name: 'send-email', runAt: ago(2 * MINUTE) });
    for (let i = 0; i < 2; i++) await insertJob(db, { queue: 'mail', name: 'send-email', runAt: fromNow(10 * MINUTE) });
    await insertJob(db, {
      queue: 'mail',
      name: 'send-email',
      runAt: fromNow(MINUTE),
      retryTimes: 1,
      lastError: 'SMTP 451',
    });
    for (let i = 0; i < 2; i++)
      await insertJob(db, { queue: 'mail', name: 'send-email', lockId: `web-1-${4242 + i}~abc.1` });
    const secret = await insertJob(db, {
      queue: 'reports',
      name: 'render-pdf',
      payload: { title: XSS, apiKey: 'sk-live-123456', nested: { password: 'hunter2' } },
      lastError: `Error: ${XSS}\n    at render (reports.js:1:1)`,
    });
    await insertDead('mail', 'send-email', { to: 'a@example.com' }, `Error: ${XSS}`);
    await insertDead('billing', 'charge', { amount: 5 }, 'Error: card declined');
    await db.sluice.enqueueBatch(Array.from({ length: 4 }, () => ({ name: 'thumbnail', queue: 'images' })));
    // 300 finished jobs over the last 35 minutes, for the charts (a recursive CTE: MySQL 8 and MariaDB alike).
    await db.query(`INSERT INTO sluice_job_history (job_id, queue, name, payload, retry_times, created_at, finished_at)
      WITH RECURSIVE seq (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < 300)
      SELECT 100000 + n, 'mail', 'send-email', '{}', 0, NOW(3) - INTERVAL 2 HOUR, NOW(3) - INTERVAL (n * 7) SECOND FROM seq`);
    // 60 digests over the last 30 minutes that ran 250 ms after waiting 1 s, for the run and wait charts.
    await db.query(`INSERT INTO sluice_job_history (job_id, queue, name, payload, retry_times, outcome, created_at, started_at, finished_at)
      WITH RECURSIVE seq (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < 60)
      SELECT 200000 + n, 'mail', 'send-digest', '{}', 0, 'completed', f - INTERVAL 1250000 MICROSECOND,
             f - INTERVAL 250000 MICROSECOND, f
      FROM (SELECT n, NOW(3) - INTERVAL (n * 30) SECOND AS f FROM seq) s`);

    // A maintenance process that led a pass (and still holds its lease): the overview says it runs.
    const maintenance = db.sluice.maintenance({ jitterMs: 0 });
    await maintenance.runOnce();
    onTestFinished(() => maintenance.stop());

    const page = await browser.page();
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await page.goto(`${dashboard.url}/`);
    expect(await page.getAttribute('section.maintenance', 'data-maintenance')).toBe('ok');
    expect(await page.textContent('section.maintenance')).toContain(`led by ${maintenance.holder}`);
    const expected = await sqlCounts();
    expect(Object.keys(expected).sort()).toEqual(['billing', 'images', 'mail', 'reports']);
    for (const [queue, counts] of Object.entries(expected)) {
      for (const [state, n] of Object.entries(counts)) {
        await expect
          .poll(() => page.textContent(`tr[data-queue="${queue}"] td[data-count="${state}"]`))
          .toBe(String(n));
      }
    }
    const finishedRecently = async () =>
      String(
        (
          await db.query<{ n: number }>(
            "SELECT COUNT(*) AS n FROM sluice_job_history WHERE queue = 'mail' AND finished_at > NOW(3) - INTERVAL 300 SECOND",
          )
        )[0]?.n,
      );
    expect(Number(await finishedRecently())).toBeGreaterThan(30);
    await expect
      .poll(
        async () =>
          (await page.textContent('tr[data-queue="mail"] td[data-count="finished"]')) === (await finishedRecently()),
      )
      .toBe(true);
    expect(await page.getAttribute('tr[data-queue="billing"]', 'class')).toContain('problem');
    expect(await page.textContent('tr[data-queue="images"]')).toContain('no worker');
    await page.waitForSelector('.chart[data-series="throughput-minutes"] canvas');
    await screenshot(page, 'overview', docsShot('dashboard-overview.png'));

    // The data refreshes by itself: a new job shows up without a reload.
    await insertJob(db, { queue: 'images', name: 'thumbnail' });
    await expect.poll(() => page.textContent('tr[data-queue="images"] td[data-count="ready"]')).toBe('5');

    // A queue's page charts its own jobs per minute: mail's, and not billing's.
    await page.goto(`${dashboard.url}/queues/mail`);
    await page.waitForSelector('.chart[data-series="queue-throughput-minutes"] canvas');
    const series = JSON.parse((await page.textContent('script#queue-throughput-minutes')) ?? '{}') as {
      finished: number[];
    };
    const [mailHour] = await db.query<{ n: number }>(
      "SELECT COUNT(*) AS n FROM sluice_job_history WHERE queue = 'mail' AND finished_at > NOW(3) - INTERVAL 3600 SECOND",
    );
    expect(series.finished.reduce((a, b) => a + b, 0)).toBe(Number(mailHour?.n));
    // By job name, and the run and wait quantiles per minute: of every name, then of one chosen.
    type Chart = { unit: string; series: { label: string; values: (number | null)[] }[] };
    const chart = async (id: string): Promise<Chart> => {
      await page.waitForSelector(`.chart[data-series="${id}"] canvas`);
      return JSON.parse((await page.textContent(`script#${id}`)) ?? '{}') as Chart;
    };
    const sum = (values: (number | null)[]) => values.reduce<number>((a, b) => a + (b ?? 0), 0);
    const names = await chart('queue-names-minutes');
    for (const name of ['send-email', 'send-digest']) {
      const [n] = await db.query<{ n: number }>(
        "SELECT COUNT(*) AS n FROM sluice_job_history WHERE queue = 'mail' AND name = ? AND finished_at > NOW(3) - INTERVAL 3600 SECOND",
        [name],
      );
      expect(sum(names.series.find((s) => s.label === name)?.values ?? [])).toBe(Number(n?.n));
    }
    const quantilesOf = async (id: string) => {
      const { unit, series } = await chart(id);
      expect(unit).toBe('ms');
      return series.flatMap((s) => s.values).filter((v): v is number => v !== null);
    };
    const within = (values: number[], exact: number) => {
      expect(values.length).toBeGreaterThan(0);
      for (const v of values) expect(Math.abs(v / exact - 1)).toBeLessThanOrEqual(0.09);
    };
    within(await quantilesOf('queue-run-minutes'), 250);
    within(await quantilesOf('queue-wait-minutes'), 1_000);
    await page.click('nav[data-field="timing-names"] a:text-is("send-email")');
    await page.waitForURL(/name=send-email/);
    // send-email's entries carry no start: nothing to chart, and the chooser says which is shown.
    expect(await quantilesOf('queue-run-minutes')).toEqual([]);
    expect(await page.textContent('nav[data-field="timing-names"] a[aria-current="page"]')).toBe('send-email');
    await page.click('nav[data-field="timing-names"] a:text-is("send-digest")');
    await page.waitForURL(/name=send-digest/);
    within(await quantilesOf('queue-run-minutes'), 250);

    // The job's page: the payload and error are text (nothing ran), secrets masked.
    await page.goto(`${dashboard.url}/jobs/${secret}`);
    const payload = (await page.textContent('pre[data-field="payload"]')) ?? '';
    expect(payload).toContain('<script>window.__pwned = 1</script><img src=x onerror=');
    expect(payload).not.toContain('sk-live-123456');
    expect(payload).not.toContain('hunter2');
    expect(await page.textContent('pre[data-field="error"]')).toContain(XSS);
    expect(await page.content()).not.toContain('hunter2');
    // Times read relative on the browser's clock ("3 min ago"), the exact UTC time on hover.
    const created = page.locator('ol.timeline time[datetime]').first();
    expect(await created.textContent()).toMatch(/^(\d+(\.\d)? (s|min|h|d) ago|just now)$/);
    expect(await created.getAttribute('title')).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} UTC$/);
    await screenshot(page, 'job', docsShot('dashboard-job.png'));

    for (const [name, path] of [
      ['queue', '/queues/mail'],
      ['jobs', '/jobs?queue=mail&state=waiting'],
      ['dead', '/dead'],
      ['workers', '/workers'],
      ['batches', '/batches'],
      ['schedules', '/schedules'],
    ] as const) {
      const response = await page.goto(`${dashboard.url}${path}`);
      expect(response?.status(), path).toBe(200);
      if (name === 'queue') {
        await page.waitForSelector('.chart[data-series="queue-run-minutes"] canvas');
        // The docs' picture of a queue: its charts.
        await page.evaluate(() =>
          [...document.querySelectorAll('h2')].find((h) => h.textContent === 'Throughput')?.scrollIntoView(),
        );
      }
      await screenshot(page, name, name === 'queue' ? docsShot('dashboard-queue.png') : undefined);
    }
    expect(await page.textContent('tr[data-schedule="nightly-report"]')).toContain('0 3 * * *');
    await page.goto(`${dashboard.url}/dead`);
    expect(await page.textContent('table.jobs')).toContain('<script>');
    await page.goto(`${dashboard.url}/jobs?state=waiting&queue=mail`);
    expect(await page.locator('table.jobs tbody tr').count()).toBe(3);
    await page.goto(`${dashboard.url}/batches`);
    expect(await page.textContent('table.batches tbody')).toContain('4');

    expect(await page.evaluate(() => (window as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(dialogs).toEqual([]);
    expect(browser.offsite).toEqual([]);
  });

  it('jumps to a job by id, pages with keyset cursors, and answers bad input with a clear 400', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 120; i++) ids.push(await insertJob(db, { queue: 'bulk', name: 'n', runAt: ago(MINUTE) }));
    const page = await browser.page();
    await page.goto(`${dashboard.url}/`);
    await page.fill('form.jump input[name="id"]', String(ids[7]));
    await page.click('form.jump button');
    await page.waitForURL(`**/jobs/${ids[7]}`);
    expect(await page.textContent('h1')).toBe(`Job ${ids[7]}`);

    await page.goto(`${dashboard.url}/jobs?queue=bulk&state=waiting`);
    const seen = new Set<string>();
    for (;;) {
      for (const id of await page
        .locator('table.jobs tbody tr')
        .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-job-id'))))
        seen.add(String(id));
      const next = page.locator('p.paging a');
      if ((await next.count()) === 0) break;
      await next.click();
    }
    expect([...seen].sort()).toEqual(ids.map(String).sort());

    // A filter no index serves (a name) reads at most scanLimit entries a page: an empty page says
    // so and links on, and the next pages find the job behind 6,000 others.
    const digits =
      '(SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)';
    await db.query(`INSERT INTO sluice_jobs (queue, name, payload, run_at, created_at)
      SELECT 'wide', 'a', '{}', NOW(3) - INTERVAL 1 HOUR, NOW(3) FROM ${digits} x, ${digits} y, ${digits} z, ${digits} w
      WHERE x.d + 10 * y.d + 100 * z.d + 1000 * w.d < 6000`);
    const needle = await insertJob(db, { queue: 'wide', name: 'b', runAt: ago(MINUTE) });
    await page.goto(`${dashboard.url}/jobs?queue=wide&state=waiting&name=b`);
    expect(await page.textContent('main p.empty')).toContain('None found among the index entries this page read');
    for (let pages = 0; (await page.locator('table.jobs').count()) === 0 && pages < 5; pages++)
      await page.click('p.paging a');
    expect(
      await page.locator('table.jobs tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-job-id'))),
    ).toEqual([String(needle)]);

    const bad = await page.goto(`${dashboard.url}/jobs?state=sleeping`);
    expect(bad?.status()).toBe(400);
    expect(await page.textContent('[role="alert"]')).toContain('state: must be one of');
    const missing = await page.goto(`${dashboard.url}/jobs/999999999`);
    expect(missing?.status()).toBe(404);
  });

  it('runs a delayed job now and enqueues a recurring job now, from their pages', async () => {
    const delayed = await insertJob(db, { queue: 'later', name: 'n', runAt: fromNow(60 * MINUTE) });
    const page = await browser.page();
    await page.goto(`${dashboard.url}/jobs/${delayed}`);
    expect(await page.getAttribute('[data-state]', 'data-state')).toBe('delayed');
    expect(await page.locator('button[data-action="cancel-job"]').count()).toBe(1);
    await page.click('button[data-action="run-job-now"]');
    await page.waitForSelector(`.notice:has-text("Job ${delayed} is due now")`);
    expect(await page.getAttribute('[data-state]', 'data-state')).toBe('waiting');

    await page.goto(`${dashboard.url}/schedules`);
    await page.click('tr[data-schedule="nightly-report"] button[data-action="enqueue-schedule"]');
    await page.waitForSelector('.notice:has-text("(nightly-report) enqueued")');
    const [job] = await db.query<{ queue: string; payload: string }>(
      "SELECT queue, payload FROM sluice_jobs WHERE name = 'nightly-report'",
    );
    expect(job).toEqual({ queue: 'reports', payload: '{"manual":true}' });
  });
});
