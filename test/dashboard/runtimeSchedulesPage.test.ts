import { describe, expect, it } from 'vitest';
import { basicAuth } from '../../src/index.ts';
import { useBrowser } from '../helpers/browser.ts';
import { useDashboard } from '../helpers/dashboardServer.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/** docs/schedules.md "Dashboard": run-time schedules listed by page, paused, resumed and removed from the page. */
const db = useTestDatabase('dashboard_schedules');
const OPS = { username: 'ops', password: 'pw-schedules-5e90' };
const dashboard = useDashboard(() => db.sluice, { auth: basicAuth({ user: 'ops', password: OPS.password }) });
const browser = useBrowser(OPS);

describe('the schedules page', () => {
  it('lists run-time schedules a page at a time and pauses, resumes and removes one', async () => {
    for (let i = 0; i < 52; i++)
      await db.sluice.schedules.upsert({ key: `c${String(i).padStart(2, '0')}`, job: 'digest', every: 60_000 });
    const page = await browser.page();
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto(`${dashboard.url}/schedules`);
    expect(await page.locator('tr[data-runtime-schedule]').count()).toBe(50);
    await page.click('a[data-next]');
    await page.waitForURL(/after=c49/);
    expect(await page.locator('tr[data-runtime-schedule]').allTextContents()).toHaveLength(2);

    await page.goto(`${dashboard.url}/schedules`);
    const row = page.locator('tr[data-runtime-schedule="c00"]');
    await row.locator('button:has-text("Pause")').click();
    await page.waitForSelector('.notice:has-text("Schedule paused")');
    expect(await page.locator('tr[data-runtime-schedule="c00"]').textContent()).toContain('paused');
    expect((await db.sluice.schedules.get('c00'))?.paused).toBe(true);

    await page.locator('tr[data-runtime-schedule="c00"] button:has-text("Resume")').click();
    await page.waitForSelector('.notice:has-text("Schedule resumed")');
    expect((await db.sluice.schedules.get('c00'))?.paused).toBe(false);

    await page.locator('tr[data-runtime-schedule="c00"] button:has-text("Remove")').click();
    await page.waitForSelector('.notice:has-text("Schedule removed")');
    expect(await db.sluice.schedules.get('c00')).toBeNull();
    expect(await page.locator('tr[data-runtime-schedule="c00"]').count()).toBe(0);
  });
});
