import { describe, expect, it } from 'vitest';
import { useBrowser } from '../helpers/browser.ts';
import { useDashboard } from '../helpers/dashboardServer.ts';
import { statementsOf } from '../helpers/statementsOf.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * Search, in a real Chromium: by id (a jump), by idempotency key (index reads: live jobs in any
 * queue, a finished one given its queue), and by a payload field, which no index serves — each
 * page reads a stated number of jobs of the filter and their payloads (inline, packed or stored
 * apart), in a bounded number of statements, and pages on.
 */
const db = useTestDatabase('search_page');
const dashboard = useDashboard(() => db.sluice, { auth: false });
const browser = useBrowser();

describe('the search page', () => {
  it('finds a job by id, by idempotency key and by a payload field, saying what it read', async () => {
    const keyed = await db.sluice.enqueue({
      name: 'mail',
      queue: 'sq',
      payload: { to: 'x' },
      idempotencyKey: 'order-77',
    });
    const big = 'y'.repeat(5_000); // stored apart from its row
    const batch = await db.sluice.enqueueBatch(
      Array.from({ length: 700 }, (_, i) => ({
        name: 'mail',
        queue: 'sq',
        payload: { customer: { id: i % 350 === 7 ? 'c-42' : `n-${i}` }, pad: i === 357 ? big : '' },
      })),
    );
    const ids = (
      await db.query<{ id: number }>('SELECT id FROM sluice_jobs WHERE batch_id = ? ORDER BY id', [batch.batchId])
    ).map((r) => Number(r.id));
    const page = await browser.page();
    await page.goto(`${dashboard.url}/search`);
    await page.fill('form.search input[name="id"]', String(keyed.id));
    await page.click('form.search button');
    await page.waitForURL(`**/jobs/${keyed.id}`);

    await page.goto(`${dashboard.url}/search?key=order-77`);
    expect(await page.locator('[data-field="by-key"] li').allTextContents()).toEqual([`${keyed.id} waiting sq · mail`]);

    const first = await statementsOf(db.sluice, () =>
      page.goto(`${dashboard.url}/search?path=customer.id&equals=c-42&queue=sq`),
    );
    expect(first.n).toBeLessThanOrEqual(30);
    expect(await page.textContent('[data-field="search-cost"]')).toContain('Read 500 job(s) of the filter');
    expect(await page.textContent('[data-field="search-cost"]')).toContain('The next page reads on.');
    const found = await page
      .locator('tr[data-job-id]')
      .evaluateAll((trs) => trs.map((t) => Number(t.getAttribute('data-job-id'))));
    expect(found).toEqual([ids[7], ids[357]]);
    await Promise.all([page.waitForURL(/after=/), page.click('p.paging a')]);
    expect(await page.textContent('[data-field="search-cost"]')).toContain('Read 201 job(s)');
    expect(await page.textContent('[data-field="search-cost"]')).toContain('No more jobs match the filter.');
    expect(await page.locator('tr[data-job-id]').count()).toBe(0);
  });

  it('finds a finished job by its key given its queue, and refuses a path that is not one', async () => {
    const { id } = await db.sluice.enqueue({ name: 'mail', queue: 'fk', idempotencyKey: 'k-9' });
    await db.sluice.jobs.cancel(id);
    expect(await db.sluice.jobs.findByKey('k-9')).toEqual([]);
    expect(await db.sluice.jobs.findByKey('k-9', { queue: 'fk' })).toEqual([id]);
    const page = await browser.page();
    await page.goto(`${dashboard.url}/search?key=k-9&queue=fk`);
    expect(await page.locator('[data-field="by-key"] li').allTextContents()).toEqual([`${id} cancelled fk · mail`]);
    const bad = await page.goto(`${dashboard.url}/search?path=a..b&equals=1`);
    expect(bad?.status()).toBe(400);
    expect(await page.textContent('body')).toContain('must be field names joined by dots');
  });
});
