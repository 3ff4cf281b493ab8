import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { CsrfTokens } from '../../src/dashboard/csrf.ts';
import { basicAuth, createSluice } from '../../src/index.ts';
import { encodeCursor } from '../../src/jobControl/jobCursor.ts';
import { useDashboard } from '../helpers/dashboardServer.ts';
import { insertJob } from '../helpers/factory.ts';
import { testLogger, useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * The dashboard over plain HTTP, against what a hostile or careless input puts in front of it: a
 * job page stays small whatever the payload's depth or size (the whole value is a masked download
 * behind the same auth), progress is masked like the payload and drawn as a bar when it is a
 * fraction, a cursor edited by hand is a 400, notices are sentences of the dashboard's own chosen
 * by code, an action's return address is checked once normalised, the CSRF cookie is Secure over
 * HTTPS, and a database nobody migrated gets the CLI's sentence instead of a 500.
 */
const db = useTestDatabase('dashboard_bounds');
const BASE = '/admin/sluice';
const OPS = { user: 'ops', password: 'correct horse battery staple' };
const dashboard = useDashboard(() => db.sluice, { auth: basicAuth(OPS), basePath: BASE });
const AUTH = { authorization: `Basic ${Buffer.from(`${OPS.user}:${OPS.password}`).toString('base64')}` };

const get = (path: string, headers: Record<string, string> = {}) =>
  fetch(`${dashboard.url}${path}`, { headers: { ...AUTH, ...headers }, redirect: 'manual' });

/** A job row whose payload is this JSON text (the factory would stringify a value, which a deep one overflows). */
async function insertPayload(text: string): Promise<number> {
  const [header] = (await db.sluice.knex.raw(
    `INSERT INTO sluice_jobs (queue, name, payload, run_at, created_at) VALUES ('mail', 'deep', ?, NOW(3), NOW(3))`,
    [text],
  )) as [{ insertId: number }];
  return Number(header.insertId);
}

/** `{"a":{"a":…}}` `depth` deep, with a secret field `secretAt` levels down. */
function deepObject(depth: number, secretAt: number): string {
  let text = '';
  for (let i = 0; i < depth; i++) text += i === secretAt ? '{"password":"hunter2","a":' : '{"a":';
  return `${text}1${'}'.repeat(depth)}`;
}

describe('dashboard bounds', () => {
  it('shows a deep payload in a bounded page, and all of it, masked, as a download behind the same auth', async () => {
    // 4,000 deep: JSON.stringify(v, null, 2) made a 32 MB page of it.
    const id = await insertPayload(deepObject(4_000, 3_000));
    const page = await get(`/jobs/${id}`);
    expect(page.status).toBe(200);
    const text = await page.text();
    expect(Buffer.byteLength(text)).toBeLessThan(256 * 1024);
    expect(text).toContain('Download the whole payload');
    expect(text).toContain(`href="${BASE}/jobs/${id}/payload.json"`);

    const download = await get(`/jobs/${id}/payload.json`);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(download.headers.get('content-disposition')).toBe(`attachment; filename="job-${id}-payload.json"`);
    const raw = await download.text();
    expect(raw).not.toContain('hunter2');
    expect(raw).toBe(deepObject(4_000, 3_000).replace('"hunter2"', '"••••••"'));
    expect((await fetch(`${dashboard.url}/jobs/${id}/payload.json`)).status).toBe(401);

    // 200,000 deep: JSON.parse reads it, JSON.stringify overflows the stack (the page was a 500).
    const deeper = await insertPayload(`${'['.repeat(200_000)}${']'.repeat(200_000)}`);
    const deepPage = await get(`/jobs/${deeper}`);
    expect(deepPage.status).toBe(200);
    expect(Buffer.byteLength(await deepPage.text())).toBeLessThan(256 * 1024);
    const deepRaw = await (await get(`/jobs/${deeper}/payload.json`)).text();
    expect(deepRaw).toHaveLength(400_000);
    expect((await get(`/jobs/${deeper}/result.json`)).status).toBe(404);
  });

  it('masks progress like the payload', async () => {
    const secret = await insertJob(db, { queue: 'mail', lockId: 'h-1~t.1' });
    await db.query(`INSERT INTO sluice_job_progress (job_id, progress, updated_at) VALUES (?, ?, NOW(3))`, [
      secret,
      JSON.stringify({ step: 3, password: 'hunter2', apiKey: 'k-123' }),
    ]);
    const page = await (await get(`/jobs/${secret}`)).text();
    expect(page).not.toContain('hunter2');
    expect(page).not.toContain('k-123');
    expect(page).toContain('&quot;step&quot;: 3');
    const raw = await (await get(`/jobs/${secret}/progress.json`)).text();
    expect(JSON.parse(raw)).toEqual({ step: 3, password: '••••••', apiKey: '••••••' });
  });

  it('draws progress as a bar when it is a fraction', async () => {
    const fraction = await insertJob(db, { queue: 'mail', lockId: 'h-1~t.2' });
    await db.query(`INSERT INTO sluice_job_progress (job_id, progress, updated_at) VALUES (?, '0.83', NOW(3))`, [
      fraction,
    ]);
    const bar = await (await get(`/jobs/${fraction}`)).text();
    expect(bar).toMatch(/<progress value="0.83" max="1"[^>]*>83%<\/progress> 83%/);
  });

  it('answers a cursor edited by hand with a 400 naming it', async () => {
    await insertJob(db, { queue: 'mail' });
    const tampered = encodeCursor({ segment: ['mail', 'f', 'x'], key: [1, 2, 3, 4, 5, 6, 7, 8, 9] });
    for (const path of [`/jobs?after=${tampered}`, `/queues/mail?after=${tampered}`, '/dead?after=AAAA']) {
      const res = await get(`${path}`);
      expect(res.status, path).toBe(400);
      expect(await res.text(), path).toContain('option after is not a cursor');
    }
  });

  it('shows notices by code only, never text from the address', async () => {
    const phishing = encodeURIComponent('Session expired: log in again at https://evil.example');
    expect(await (await get(`/?notice=${phishing}`)).text()).not.toContain('Session expired');
    expect(await (await get(`/?notice=job-cancelled&notice_id=12`)).text()).toContain(
      '<p class="notice" role="status">Job 12 cancelled.</p>',
    );
    for (const bad of ['notice=job-cancelled', 'notice=job-cancelled&notice_id=%3Cb%3E', 'notice=toString'])
      expect(await (await get(`/?${bad}`)).text(), bad).not.toContain('class="notice"');
  });

  it('keeps an action’s return address inside the dashboard once normalised', async () => {
    const first = await get(`/`);
    const cookie = (first.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const csrf = cookie.split('=')[1] as string;
    const pause = (back: string) =>
      fetch(`${dashboard.url}/actions/pause-queue`, {
        method: 'POST',
        headers: { ...AUTH, cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrf, queue: 'mail', return: back }).toString(),
        redirect: 'manual',
      });
    for (const away of [
      `${BASE}/../..//evil.example/x`,
      `${BASE}/%2e%2e/%2e%2e//evil.example/x`,
      `${BASE}/..\\..\\/evil.example/x`,
      `${BASE}/../other-app`,
    ]) {
      const location = (await pause(away)).headers.get('location') ?? '';
      expect(location, away).not.toMatch(/^\/\//);
      expect(location, away).toMatch(new RegExp(`^${BASE}[/?]`));
      expect(location, away).toBe(`${BASE}?notice=queue-paused&notice_queue=mail`);
    }
    const home = await pause(`${BASE}/queues/mail?state=waiting&notice=x`);
    expect(home.status).toBe(303);
    expect(home.headers.get('location')).toBe(
      `${BASE}/queues/mail?state=waiting&notice=queue-paused&notice_queue=mail`,
    );
    expect((await pause(`${BASE}/jobs/../dead?queue=mail`)).headers.get('location')).toBe(
      `${BASE}/dead?queue=mail&notice=queue-paused&notice_queue=mail`,
    );
  });

  it('marks the CSRF cookie Secure when the dashboard is served over HTTPS', async () => {
    const plain = (await get(`/`)).headers.get('set-cookie') ?? '';
    expect(plain).toContain('HttpOnly; SameSite=Strict');
    expect(plain).not.toContain('Secure');
    const proxied = (await get(`/`, { 'x-forwarded-proto': 'https' })).headers.get('set-cookie') ?? '';
    expect(proxied).toMatch(/HttpOnly; SameSite=Strict; Secure$/);
    const tls = { headers: {}, socket: { encrypted: true } } as never;
    expect(new CsrfTokens(null).issue(tls, 'ops', BASE).setCookie).toMatch(/; Secure$/);
  });

  it('answers every page of an unmigrated database with what the CLI says, logged once', async () => {
    const empty = `${db.name}_empty`;
    await db.query(`CREATE DATABASE \`${empty}\``);
    const url = new URL(db.url);
    url.pathname = `/${empty}`;
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        done();
      },
    });
    const sluice = createSluice({ url: url.toString(), logger: testLogger });
    const handler = sluice.dashboard({ auth: false, logger: pino({ level: 'info' }, sink) });
    const { createServer } = await import('node:http');
    const server = createServer((req, res) => handler(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const address = server.address() as { port: number };
      for (const path of [
        '/',
        '/jobs',
        '/jobs?state=waiting',
        '/jobs/1',
        '/queues/mail',
        '/dead',
        '/workers',
        '/batches',
      ]) {
        const res = await fetch(`http://127.0.0.1:${address.port}${path}`);
        expect(res.status, path).toBe(503);
        expect(await res.text(), path).toMatch(
          /doesn(&#39;|')t exist: run `sluice migrate` \(or sluice.migrate\(\)\) against this database first/,
        );
      }
      const logged = lines.map((l) => JSON.parse(l) as { level: number; event?: string });
      expect(logged.filter((l) => l.event === 'dashboard:unavailable')).toHaveLength(1);
      expect(logged.filter((l) => l.level >= 50)).toEqual([]);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await sluice.close();
      await db.query(`DROP DATABASE \`${empty}\``);
    }
  });
});
