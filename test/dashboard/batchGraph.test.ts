import { describe, expect, it } from 'vitest';
import { basicAuth, defineJob } from '../../src/index.ts';
import { docsShot, screenshot, useBrowser } from '../helpers/browser.ts';
import { useDashboard } from '../helpers/dashboardServer.ts';
import { countRows } from '../helpers/factory.ts';
import { statementsOf } from '../helpers/statementsOf.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { withWorker } from '../helpers/workerHarness.ts';

/**
 * A batch's page in a real Chromium: a small graph (a diamond) drawn as an SVG, a box per job
 * linking to its page and a line per dependency; a large one (a fan-out of 200 feeding a fan-in)
 * as a paged table of job, state, parents and children, with no picture; and the batches list
 * and a job's page link to it. Once its jobs have finished, which died and which were cancelled,
 * listed and still drawn.
 */
const db = useTestDatabase('dashboard_batch_graph');
const OPS = { username: 'ops', password: 'correct horse battery staple' };
const dashboard = useDashboard(() => db.sluice, { auth: basicAuth({ user: OPS.username, password: OPS.password }) });
const browser = useBrowser(OPS);

async function idsByName(batchId: number): Promise<Record<string, number>> {
  const { jobs } = await db.sluice.jobs.list({ batchId }, { limit: 1_000 });
  return Object.fromEntries(jobs.map((j) => [j.name, j.id]));
}

describe('the dashboard page of a batch', () => {
  it('draws a diamond as an SVG: a box per job linking to its page, a line per dependency', async () => {
    const { batchId } = await db.sluice.enqueueBatch([
      { name: 'fetch', ref: 'fetch' },
      { name: 'resize', ref: 'resize', parents: ['fetch'] },
      { name: 'thumb', ref: 'thumb', parents: ['fetch'] },
      { name: 'publish', parents: ['resize', 'thumb'] },
    ]);
    const ids = await idsByName(batchId as number);
    const page = await browser.page();
    await page.goto(`${dashboard.url}/batches`);
    await page.click(`tr[data-batch-id="${batchId}"] a`);
    await page.waitForURL(`**/batches/${batchId}`);
    const svg = page.locator('svg[data-field="batch-graph"]');
    await expect.poll(() => svg.count()).toBe(1);
    expect(await svg.locator('rect').count()).toBe(4);
    expect(await svg.locator('line').count()).toBe(4);
    for (const id of Object.values(ids)) expect(await svg.locator(`a[data-job="${id}"]`).count()).toBe(1);
    // Columns follow the dependencies: fetch left of resize and thumb, both left of publish.
    const x = async (id: number | undefined) => Number(await svg.locator(`a[data-job="${id}"] rect`).getAttribute('x'));
    expect(await x(ids.fetch)).toBeLessThan(await x(ids.resize));
    expect(await x(ids.resize)).toBe(await x(ids.thumb));
    expect(await x(ids.thumb)).toBeLessThan(await x(ids.publish));
    // The table says the same, and a box leads to its job, whose page leads back to the batch.
    const publishRow = page.locator(`table[data-field="batch-graph-table"] tr[data-job-id="${ids.publish}"]`);
    expect(await publishRow.locator('td').nth(3).textContent()).toContain(`${ids.resize}`);
    await screenshot(page, 'batch-graph-small');
    await svg.locator(`a[data-job="${ids.publish}"]`).click();
    await page.waitForURL(`**/jobs/${ids.publish}`);
    await page.click(`a[href$="/batches/${batchId}"]`);
    await page.waitForURL(`**/batches/${batchId}`);
    await page.close();
  });

  it('shows a graph of 202 jobs as a paged table of parents and children, without a picture', async () => {
    const { batchId } = await db.sluice.enqueueBatch([
      { name: 'root', ref: 'root' },
      ...Array.from({ length: 200 }, (_, i) => ({ name: `leaf-${i}`, ref: `leaf-${i}`, parents: ['root'] })),
      { name: 'fan-in', parents: Array.from({ length: 200 }, (_, i) => `leaf-${i}`) },
    ]);
    const ids = await idsByName(batchId as number);
    const page = await browser.page();
    await page.goto(`${dashboard.url}/batches/${batchId}`);
    const table = page.locator('table[data-field="batch-graph-table"]');
    await expect.poll(() => table.locator('tbody tr').count()).toBe(50);
    expect(await page.locator('svg[data-field="batch-graph"]').count()).toBe(0);
    expect(await page.textContent('[data-field="graph-not-drawn"]')).toContain('more than 50 jobs');
    const rootRow = table.locator(`tr[data-job-id="${ids.root}"]`);
    expect(await rootRow.locator('td').nth(2).textContent()).toBe('waiting');
    expect(await rootRow.locator('td').nth(4).textContent()).toContain('(200 in all)');
    const seen = new Set(await table.locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.dataset.jobId)));
    await screenshot(page, 'batch-graph-large');
    // Page on to the end: every job of the graph once, the fan-in listing its 200 parents as a count.
    for (let pages = 1; pages < 10; pages++) {
      const next = page.locator('p.paging a');
      if ((await next.count()) === 0) break;
      await next.click();
      await page.waitForLoadState();
      for (const id of await table.locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.dataset.jobId)))
        seen.add(id);
    }
    expect(seen.size).toBe(202);
    await page.goto(`${dashboard.url}/batches/${batchId}?after=${encodeURIComponent('not a cursor')}`);
    expect(await page.locator('body').textContent()).toMatch(/after/);
    await page.close();
  });

  it('names, after the graph has run, the job that died and the jobs cancelled because of it', async () => {
    const { batchId } = await db.sluice.enqueueBatch([
      { name: 'fetch', ref: 'fetch', maxRetries: 0 },
      { name: 'resize', ref: 'resize', parents: ['fetch'] },
      { name: 'thumb', ref: 'thumb', parents: ['fetch'] },
      { name: 'publish', parents: ['resize', 'thumb'] },
    ]);
    const ids = await idsByName(batchId as number);
    const fetch = defineJob({
      name: 'fetch',
      handle: () => {
        throw new Error('origin unreachable');
      },
    });
    const never = ['resize', 'thumb', 'publish'].map((name) => defineJob({ name, handle: () => undefined }));
    await withWorker(db.sluice, [fetch, ...never], { concurrency: 2 }, async () => {
      await waitFor(async () => (await countRows(db, 'sluice_jobs')) === 0, { what: 'the graph to settle' });
    });
    const page = await browser.page();
    await page.goto(`${dashboard.url}/batches/${batchId}`);
    expect(await page.locator('[data-field="batch-graph-table"]').count()).toBe(0);
    const listed = async (state: string) =>
      (
        await page
          .locator(`[data-ended="${state}"] + ul li`)
          .evaluateAll((lis) => lis.map((li) => li.getAttribute('data-job-id')))
      )
        .map(Number)
        .sort();
    expect(await page.locator('[data-ended="dead"]').textContent()).toContain('Dead: 1');
    expect(await listed('dead')).toEqual([ids.fetch]);
    expect(await page.locator('[data-ended="dead"] + ul').textContent()).toContain('origin unreachable');
    expect(await page.locator('[data-ended="cancelled"]').textContent()).toContain('Cancelled: 3');
    expect(await listed('cancelled')).toEqual([ids.resize, ids.thumb, ids.publish].sort());
    // Still drawn from the kept edges: which box died, which were cancelled, every dependency.
    const svg = page.locator('svg[data-field="batch-graph"]');
    expect(await svg.locator('line').count()).toBe(4);
    const state = (id: number | undefined) => svg.locator(`a[data-job="${id}"] rect`).getAttribute('class');
    expect(await state(ids.fetch)).toBe('node node-dead');
    for (const id of [ids.resize, ids.thumb, ids.publish]) expect(await state(id)).toBe('node node-cancelled');
    // The page, its finished graph and its ended jobs included, in a bounded number of statements.
    const { n } = await statementsOf(db.sluice, async () =>
      (
        await globalThis.fetch(`${dashboard.url}/batches/${batchId}`, {
          headers: { authorization: `Basic ${Buffer.from(`${OPS.username}:${OPS.password}`).toString('base64')}` },
        })
      ).text(),
    );
    expect(n).toBeLessThanOrEqual(12);
    await screenshot(page, 'batch-ended', docsShot('dashboard-batch.png'));
    // A finished job's page draws its neighbourhood from the kept edges too.
    await page.goto(`${dashboard.url}/jobs/${ids.resize}`);
    const around = page.locator('svg[data-field="workflow-graph"]');
    expect(await around.locator(`a[data-job="${ids.fetch}"] rect`).getAttribute('class')).toBe('node node-dead');
    expect(await around.locator(`a[data-job="${ids.publish}"] rect`).getAttribute('class')).toBe('node node-cancelled');
    expect(await page.textContent('[data-field="children"]')).toContain('cancelled');
    await page.goto(`${dashboard.url}/batches/${batchId}`);
    // "as a list": the jobs page filtered to the batch and the state, the same jobs.
    await page.click('[data-ended="cancelled"] a');
    await page.waitForURL(/\/jobs\?/);
    expect(await page.locator('tr[data-job-id]').count()).toBe(3);
    await page.close();
  });

  it('says it lists the first 20 when more were cancelled', async () => {
    const { batchId } = await db.sluice.enqueueBatch(Array.from({ length: 25 }, (_, i) => ({ name: `job-${i}` })));
    expect(await db.sluice.jobs.cancel({ batchId: batchId as number })).toEqual({ cancelled: 25 });
    const page = await browser.page();
    await page.goto(`${dashboard.url}/batches/${batchId}`);
    expect(await page.locator('[data-ended="cancelled"]').textContent()).toContain('Cancelled: 25, the first 20 below');
    expect(await page.locator('[data-ended="cancelled"] + ul li').count()).toBe(20);
    await page.close();
  });
});
