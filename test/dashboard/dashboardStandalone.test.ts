import { readFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { describe, expect, it } from 'vitest';
import { screenshot, useBrowser } from '../helpers/browser.ts';
import { insertJob } from '../helpers/factory.ts';
import { runCli } from '../helpers/runCli.ts';
import { type SluiceProcess, spawnSluice } from '../helpers/spawnSluice.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * `sluice dashboard` as a real process: it refuses to start without credentials unless --no-auth
 * is given, binds 127.0.0.1, answers 401 without (or with wrong) credentials, keeps the password
 * out of its argv and its logs, refuses a cross-site or token-less POST; with --read-only it
 * shows no action and refuses a forged POST that carries a valid CSRF token.
 */
const db = useTestDatabase('dashboard_standalone');
const USER = 'ops';
const PASSWORD = 'pw-standalone-7Qx2';
const browser = useBrowser({ username: USER, password: PASSWORD });
const authorization = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

async function startDashboard(...flags: string[]): Promise<{ process: SluiceProcess; url: string }> {
  const child = spawnSluice('dashboard', ['--url', db.url, '--port', '0', ...flags], {
    logLevel: 'info',
    env: { SLUICE_DASHBOARD_USER: USER, SLUICE_DASHBOARD_PASSWORD: PASSWORD },
  });
  await child.ready;
  const line = await child.waitForLine((l) => l.event === 'dashboard:listening', 10_000);
  expect(line.host).toBe('127.0.0.1');
  return { process: child, url: `http://127.0.0.1:${line.port}` };
}

describe('sluice dashboard (standalone)', () => {
  it('needs credentials or an explicit --no-auth, binds loopback, and answers 401 without credentials', async () => {
    const refused = await runCli(['dashboard', '--url', db.url, '--port', '0'], {
      env: { SLUICE_DASHBOARD_USER: undefined, SLUICE_DASHBOARD_PASSWORD: undefined },
    });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('needs credentials');
    expect(refused.stderr).toContain('--no-auth');

    const { process: child, url } = await startDashboard();
    const port = new URL(url).port;
    const none = await fetch(`${url}/`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Basic realm="sluice"/);
    expect((await fetch(`${url}/`, { headers: { authorization: authorization(USER, 'wrong') } })).status).toBe(401);
    expect((await fetch(`${url}/assets/dashboard.js`)).status).toBe(401);
    const ok = await fetch(`${url}/`, { headers: { authorization: authorization(USER, PASSWORD) } });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('<h1>Overview</h1>');

    // Not reachable on this machine's other addresses.
    for (const address of Object.values(networkInterfaces())
      .flat()
      .filter((a) => a && a.family === 'IPv4' && !a.internal)) {
      await expect(fetch(`http://${address?.address}:${port}/`)).rejects.toThrow();
    }

    // A POST from another site, or without the form's token, changes nothing.
    const auth = { authorization: authorization(USER, PASSWORD), 'content-type': 'application/x-www-form-urlencoded' };
    const crossSite = await fetch(`${url}/actions/pause-queue`, {
      method: 'POST',
      headers: { ...auth, origin: 'http://evil.example' },
      body: 'queue=default',
      redirect: 'manual',
    });
    expect(crossSite.status).toBe(403);
    expect(await crossSite.text()).toContain('is not this dashboard&#39;s host');
    const cookie = (ok.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const tokenless = await fetch(`${url}/actions/pause-queue`, {
      method: 'POST',
      headers: { ...auth, cookie },
      body: 'queue=default',
      redirect: 'manual',
    });
    expect(tokenless.status).toBe(403);
    expect(await tokenless.text()).toContain('csrf: the form token does not match');
    expect(await db.sluice.queues.paused()).toEqual([]);

    expect(readFileSync(`/proc/${child.pid}/cmdline`, 'utf8')).not.toContain(PASSWORD);
    expect((await child.stop()).code).toBe(0);
    expect(child.describe()).not.toContain(PASSWORD);
    expect(JSON.stringify(child.lines)).not.toContain(PASSWORD);
  });

  it('--read-only shows no action on any page and refuses a forged POST', async () => {
    const id = await insertJob(db, { queue: 'mail', name: 'send-email' });
    await db.query(
      `INSERT INTO sluice_dead_jobs (id, queue, name, payload, priority, retry_times, max_retries, last_error, created_at, failed_at)
       VALUES (900100, 'mail', 'send-email', '{}', 0, 4, 3, 'Error: x', NOW(3), NOW(3))`,
    );
    const { process: child, url } = await startDashboard('--read-only');
    const page = await browser.page();
    for (const path of [
      '/',
      '/queues/mail',
      `/jobs/${id}`,
      '/jobs/900100',
      '/dead',
      '/workers',
      '/batches',
      '/schedules',
    ]) {
      expect((await page.goto(`${url}${path}`))?.status(), path).toBe(200);
      expect(await page.locator('form[method="post"], button[data-action]').count(), path).toBe(0);
    }
    expect(await page.textContent('header')).toContain('read-only');
    await screenshot(page, 'read-only');

    const csrf = (await page.context().cookies(url)).find((c) => c.name === 'sluice_csrf')?.value as string;
    expect(csrf).toMatch(/^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/);
    for (const [action, form] of [
      ['pause-queue', { queue: 'mail' }],
      ['cancel-job', { id: String(id), confirmed: 'yes' }],
      ['purge-dead-job', { id: '900100', confirmed: 'yes' }],
    ] as const) {
      const forged = await page.request.post(`${url}/actions/${action}`, {
        form: { csrf, return: '/', ...form },
        maxRedirects: 0,
      });
      expect(forged.status(), action).toBe(403);
    }
    expect(await db.sluice.queues.paused()).toEqual([]);
    expect((await db.sluice.jobs.get(id))?.state).toBe('waiting');
    expect((await db.sluice.jobs.get(900_100))?.state).toBe('dead');
    expect((await child.stop()).code).toBe(0);
    expect(child.events('dashboard:refused').map((l) => l.action)).toEqual([
      'pause-queue',
      'cancel-job',
      'purge-dead-job',
    ]);
  });
});
