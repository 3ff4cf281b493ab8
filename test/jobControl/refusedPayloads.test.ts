import { deflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { basicAuth } from '../../src/index.ts';
import { useDashboard } from '../helpers/dashboardServer.ts';
import { insertJob } from '../helpers/factory.ts';
import { jsonOutput, runCli } from '../helpers/runCli.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * Every reader that shows a stored payload — jobs.get, the dead-job list, `sluice jobs get`, the
 * dashboard's job page and its download — says "payload refused: …" for text sluice could not have
 * written, instead of unpacking it (the issue's 134 KB dead row took the dashboard to 3.3 GB and
 * past 120 s). Rows are written directly: an 85 KB packed row that would unpack to 63 MiB, live
 * and dead, and packed text in job_payloads.
 */
const db = useTestDatabase('refused_payload_readers');
const OPS = { user: 'ops', password: 'correct horse battery staple' };
const dashboard = useDashboard(() => db.sluice, { auth: basicAuth(OPS) });
const AUTH = { authorization: `Basic ${Buffer.from(`${OPS.user}:${OPS.password}`).toString('base64')}` };

/** An 85 KB packed text of a JSON string of 63 MiB of zeros. */
function bomb(): string {
  const json = Buffer.alloc(63 * 1024 * 1024, '0');
  json[0] = 0x22;
  json[json.length - 1] = 0x22;
  return `deflate:${deflateRawSync(json, { level: 9 }).toString('base64')}`;
}

/** Inserts a dead job whose row holds `payload`; returns its id. */
async function deadJob(id: number, payload: string): Promise<number> {
  await db.query(
    `INSERT INTO sluice_dead_jobs (id, queue, name, payload, priority, retry_times, last_error, created_at, failed_at)
     VALUES (?, 'default', 'work', ?, 0, 1, 'boom', NOW(3), NOW(3))`,
    [id, payload],
  );
  return id;
}

describe('a stored payload sluice could not have written, shown', () => {
  it('jobs.get, the dead-job list, the CLI and the dashboard say "payload refused: …" and never unpack it', async () => {
    const text = bomb();
    const tooLong = `payload refused: packed text of ${text.length} characters (sluice packs into at most 1024)`;
    const live = await insertJob(db, { name: 'work' });
    await db.query('UPDATE sluice_jobs SET payload = ? WHERE id = ?', [text, live]);
    const dead = await deadJob(live + 100, text);
    const deadApart = await deadJob(live + 101, '');
    await db.query('INSERT INTO sluice_job_payloads (job_id, payload) VALUES (?, ?)', [
      deadApart,
      `deflate:${deflateRawSync('{"n":1}').toString('base64')}`,
    ]);
    const apartWhy = 'payload refused: packed text stored apart (sluice keeps packed payloads in their row)';

    for (const id of [live, dead]) {
      const job = await db.sluice.jobs.get(id);
      expect(job?.payloadRefused).toBe(tooLong);
      expect(job?.payload).toBeNull();
    }
    expect((await db.sluice.jobs.get(deadApart))?.payloadRefused).toBe(apartWhy);
    const listed = await db.sluice.deadJobs.list();
    expect(listed.map((j) => [j.id, j.payload, j.payloadRefused])).toEqual([
      [dead, null, tooLong],
      [deadApart, null, apartWhy],
    ]);

    const [cliText, cliJson] = await Promise.all([
      runCli(['jobs', 'get', String(dead), '--url', db.url]),
      runCli(['jobs', 'get', String(live), '--json', '--url', db.url]),
    ]);
    expect(cliText.code, cliText.stderr).toBe(0);
    expect(
      cliText.stdout
        .split('\n')
        .find((l) => l.trim().startsWith('payload'))
        ?.trim(),
    ).toBe(`payload   ${tooLong}`);
    expect(cliText.stdout.length).toBeLessThan(4_096);
    expect(jsonOutput<{ job: { payload: unknown; payloadRefused: string } }>(cliJson).job).toMatchObject({
      payload: null,
      payloadRefused: tooLong,
    });

    const page = await fetch(`${dashboard.url}/jobs/${dead}`, { headers: AUTH });
    expect(page.status).toBe(200);
    const body = await page.text();
    expect(body).toContain(`<pre class="error" data-field="payload">${tooLong}</pre>`);
    expect(body.length).toBeLessThan(64 * 1024);
    const download = await fetch(`${dashboard.url}/jobs/${live}/payload.json`, { headers: AUTH });
    expect(download.status).toBe(404);
    expect(await download.text()).toContain(tooLong);
  });
});
