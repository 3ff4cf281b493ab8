import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { DashboardOptions } from '../../src/dashboard/dashboardOptions.ts';
import { insertJob } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * What the job page shows: a page's worth of a job's log (the rest a download away), its attempts
 * against the limit that applies, progress once, a held job without the internal parking time and
 * with what holds it; and a job file that does not load named as the cause.
 */
const db = useTestDatabase('dashboard_job_shown');
const folder = mkdtempSync(join(tmpdir(), 'sluice-jobs-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

async function get(path: string, options: Partial<DashboardOptions> = {}): Promise<{ status: number; text: string }> {
  const handler = db.sluice.dashboard({ auth: false, ...options });
  const server = createServer((req, res) => handler(req, res, () => res.writeHead(404).end()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`);
    return { status: response.status, text: await response.text() };
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

describe('job page', () => {
  it('shows the newest log lines that fit a page; all of them download', async () => {
    const id = await insertJob(db);
    const line = 'x'.repeat(1_000);
    const values = Array.from(
      { length: 3_000 },
      (_, i) => `(${id}, ${1 + Math.floor(i / 1_000)}, ${1 + (i % 1_000)}, NOW(3), '${i}:${line}', NULL, 0)`,
    );
    await db.query(
      `INSERT INTO sluice_job_logs (job_id, attempt, line, logged_at, message, fields, dropped) VALUES ${values.join(',')}`,
    );
    const { status, text } = await get(`/jobs/${id}`);
    expect(status).toBe(200);
    // 3 MB of lines kept; the page carries at most 64 KiB of them, the newest.
    expect(text.length).toBeLessThan(200_000);
    expect(text).toContain('2999:x');
    expect(text).not.toContain('>0:x');
    expect(text).toMatch(/The newest \d+ of 3000 lines kept/);
    const all = await get(`/jobs/${id}/logs.json`);
    expect(all.status).toBe(200);
    expect((JSON.parse(all.text) as { logs: unknown[] }).logs).toHaveLength(3_000);
  });

  it('says how many attempts a job gets, and shows a fraction of progress once', async () => {
    const own = await insertJob(db, { retryTimes: 1, maxRetries: 4 });
    expect((await get(`/jobs/${own}`)).text).toContain('1 failed of at most 5</dd>');
    writeFileSync(join(folder, 'mailer.mjs'), "export default { name: 'mailer', maxRetries: 7, async handle() {} };\n");
    const byDefinition = await insertJob(db, { name: 'mailer' });
    expect((await get(`/jobs/${byDefinition}`, { jobs: folder })).text).toContain(
      '0 failed of at most 8 (its definition’s retry limit)',
    );
    const noFiles = (await get(`/jobs/${byDefinition}`)).text;
    expect(noFiles).toContain('0 failed of at most 4');
    expect(noFiles).not.toContain('limit: its definition’s)');
    await db.query(
      `INSERT INTO sluice_job_progress (job_id, progress, updated_at) VALUES (?, '0.7666666666666667', NOW(3))`,
      [own],
    );
    const progress = (await get(`/jobs/${own}`)).text;
    expect(progress).toContain('77%');
    expect(progress).not.toContain('>0.7666666666666667<');
    expect(progress).not.toContain('<h2>Progress</h2>');
  });

  it('shows a held job without the parking time, and what holds it', async () => {
    await db.sluice.queues.setLimits('g', { groupConcurrency: 1 });
    await db.sluice.enqueueBatch([1, 2].map((n) => ({ name: 'x', queue: 'g', payload: { n }, group: 'acct' })));
    const [, held] = (await db.query<{ id: number }>("SELECT id FROM sluice_jobs WHERE queue = 'g' ORDER BY id")).map(
      (r) => Number(r.id),
    );
    const page = (await get(`/jobs/${held}`)).text;
    expect(page).toContain('data-state="held"');
    expect(page).toMatch(/data-field="group-hold">by its group acct: 1 slot\(s\) taken, a limit of 1/);
    const list = (await get('/jobs?queue=g')).text;
    expect(list).toContain(`/jobs/${held}"`);
    for (const text of [page, list]) expect(text).not.toContain('9999');
  });
});

describe('schedules page', () => {
  it('names a job file that does not load as the cause, not the database', async () => {
    const broken = mkdtempSync(join(tmpdir(), 'sluice-broken-'));
    try {
      writeFileSync(join(broken, 'bad.mjs'), 'export default {{ not javascript\n');
      const { status, text } = await get('/schedules', { jobs: broken });
      expect(status).toBe(500);
      expect(text).toContain('a job file could not be loaded');
      expect(text).toContain('bad.mjs');
      expect(text).not.toContain('could not be read from the database');
    } finally {
      rmSync(broken, { recursive: true, force: true });
    }
  });
});
