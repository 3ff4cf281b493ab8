import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { basicAuth } from '../../src/index.ts';
import { createFixtureTables, openGate } from '../fixtures/fixtureTables.ts';
import { screenshot, useBrowser } from '../helpers/browser.ts';
import { useDashboard } from '../helpers/dashboardServer.ts';
import { countRows } from '../helpers/factory.ts';
import { spawnWorker } from '../helpers/spawnSluice.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';

/**
 * docs/flow-control.md, docs/dashboard.md: the queue page shows a queue's cap and rate with their
 * use, and its form (CSRF-checked like every action) changes them for a worker process that is
 * already running, without a restart.
 */
const db = useTestDatabase('dashboard_limits');
const OPS = { username: 'ops', password: 'pw-limits-7c21' };
const dashboard = useDashboard(() => db.sluice, { auth: basicAuth({ user: 'ops', password: OPS.password }) });
const browser = useBrowser(OPS);

beforeAll(() => createFixtureTables(db));

async function saveLimits(page: Page, fields: { concurrency: string; rate_limit: string; rate_interval_ms: string }) {
  for (const [name, value] of Object.entries(fields)) await page.fill(`.limits-form input[name="${name}"]`, value);
  await page.locator('button[data-action="set-queue-limits"]').click();
}

describe('the queue page’s limits', () => {
  it('sets a cap a running worker obeys, raises it, and refuses a bad value writing nothing', async () => {
    const worker = spawnWorker(db.url, { queues: 'capped', concurrency: 4, pollIntervalMs: 100 });
    await worker.ready;
    const page = await browser.page();
    await page.goto(`${dashboard.url}/queues/capped`);
    expect(await page.textContent('.limits')).toContain('No concurrency cap');

    await saveLimits(page, { concurrency: '1', rate_limit: '', rate_interval_ms: '' });
    await page.waitForSelector('.notice:has-text("limits saved")');
    await db.sluice.enqueueBatch([1, 2, 3].map((n) => ({ name: 'gated', queue: 'capped', payload: { n } })));
    await waitFor(async () => (await countRows(db, 'test_starts')) === 1, { what: 'one job running' });
    await page.reload();
    expect(await page.textContent('.limits')).toMatch(/Cap 1: 1 running\.[\s\S]*At its cap/);
    await screenshot(page, 'queue-limits');
    expect(await countRows(db, 'test_starts')).toBe(1);

    // A bad value is a 400 naming the field; a post without the page's CSRF token is refused.
    const [bad, forged] = await page.evaluate(async (url) => {
      const form = document.querySelector('.limits-form') as HTMLFormElement;
      const post = async (edit: (body: URLSearchParams) => void) => {
        const body = new URLSearchParams(new FormData(form) as unknown as Record<string, string>);
        edit(body);
        return (await fetch(url, { method: 'POST', body })).status;
      };
      return [
        await post((b) => b.set('concurrency', 'lots')),
        await post((b) => {
          b.delete('csrf');
          b.set('concurrency', '9');
        }),
      ];
    }, `${dashboard.url}/actions/set-queue-limits`);
    expect(bad).toBe(400);
    expect(forged).toBe(403);
    expect((await db.sluice.queues.limits())[0]?.concurrency).toBe(1);

    await saveLimits(page, { concurrency: '3', rate_limit: '10', rate_interval_ms: '1000' });
    await page.waitForSelector('.notice:has-text("limits saved")');
    await waitFor(async () => (await countRows(db, 'test_starts')) === 3, {
      what: 'three jobs running under a cap of 3',
    });
    expect((await db.sluice.queues.limits())[0]).toMatchObject({
      concurrency: 3,
      rate: { limit: 10, intervalMs: 1_000 },
    });
    await openGate(db, worker.pid);
    await waitFor(async () => (await countRows(db, 'sluice_jobs')) === 0, { what: 'the queue drained' });
    expect((await worker.stop()).code).toBe(0);
  });

  it('sets a queue’s group concurrency and fairness, and shows the jobs held for their group', async () => {
    const page = await browser.page();
    await page.goto(`${dashboard.url}/queues/grouped`);
    await page.fill('.limits-form input[name="group_concurrency"]', '1');
    await page.fill('.limits-form input[name="group_rate_limit"]', '2');
    await page.fill('.limits-form input[name="group_rate_interval_ms"]', '86400000');
    await page.check('.limits-form input[name="fair"]');
    await page.locator('button[data-action="set-queue-limits"]').click();
    await page.waitForSelector('.notice:has-text("limits saved")');
    const grouped = async () => (await db.sluice.queues.limits()).find((l) => l.queue === 'grouped');
    expect(await grouped()).toMatchObject({
      groupConcurrency: 1,
      fairWindow: 500,
      groupRate: { limit: 2, intervalMs: 86_400_000 },
    });
    // Three jobs of g: one runs (limit 1), two wait for their group; the default rate of 2 a day
    // gives two of them today's window and the third tomorrow's.
    await db.sluice.enqueueBatch(
      [1, 2, 3].map((n) => ({ name: 'gated', queue: 'grouped', payload: { n }, group: 'g' })),
    );
    await page.reload();
    expect(await page.textContent('.limits')).toMatch(
      /At most 1 per group\.[\s\S]*Each group starts at most 2 per 1\.0 d\.[\s\S]*Fair[\s\S]*2 held for their group/,
    );
    expect(await page.isChecked('.limits-form input[name="fair"]')).toBe(true);
    expect(await page.inputValue('.limits-form input[name="group_rate_limit"]')).toBe('2');
    const row = page.locator('table.groups tr[data-group="g"]');
    expect((await row.locator('td').allTextContents()).slice(0, 3)).toEqual([
      'g',
      '1 / 1 (queue default)',
      '2 / 2 per 1.0 d (queue default)',
    ]);
    await screenshot(page, 'queue-groups');

    // Half a rate, or a rate of 0, is a 400 naming the field, and changes nothing.
    const statuses = await page.evaluate(async (url) => {
      const form = document.querySelector('.limits-form') as HTMLFormElement;
      const post = async (edit: (body: URLSearchParams) => void) => {
        const body = new URLSearchParams(new FormData(form) as unknown as Record<string, string>);
        edit(body);
        const response = await fetch(url, { method: 'POST', body });
        return [response.status, await response.text()] as const;
      };
      return [
        await post((b) => {
          b.set('group_concurrency', '7');
          b.set('group_rate_interval_ms', '');
        }),
        await post((b) => {
          b.set('group_concurrency', '7');
          b.set('group_rate_limit', '0');
        }),
      ];
    }, `${dashboard.url}/actions/set-queue-limits`);
    expect(statuses.map(([status]) => status)).toEqual([400, 400]);
    expect(statuses[0]?.[1]).toContain('group_rate_limit');
    expect(statuses[1]?.[1]).toContain('groupRate.limit');
    expect(await grouped()).toMatchObject({ groupConcurrency: 1, groupRate: { limit: 2, intervalMs: 86_400_000 } });
  });
});
