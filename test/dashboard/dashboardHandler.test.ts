import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { escapeHtml, html, jsonScript } from '../../src/dashboard/html.ts';
import { basicAuth, defineJob, OptionsError } from '../../src/index.ts';
import { ago, insertJob, MINUTE } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';

/**
 * The handler without a browser: its options fail early and clearly, it mounts under a base path
 * the way an Express app mounts it (passing other paths to `next`), an action's return address
 * cannot leave the dashboard, a masking hook decides what a payload shows, and the HTML
 * templates escape every value.
 */
const db = useTestDatabase('dashboard_handler');

async function serve(handler: ReturnType<typeof db.sluice.dashboard>, mount: string) {
  const server = createServer((req, res) => {
    // As Express does for app.use(mount, handler): req.url is cut, req.originalUrl kept.
    const original = req.url ?? '/';
    if (!original.startsWith(mount)) return handler(req, res, () => res.writeHead(418).end('app'));
    if (mount !== '') Object.assign(req, { originalUrl: original, url: original.slice(mount.length) || '/' });
    handler(req, res, () => res.writeHead(418).end('app'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('dashboard handler', () => {
  it('requires an explicit auth choice and rejects bad options by name', () => {
    expect(() => db.sluice.dashboard({})).toThrow(OptionsError);
    expect(() => db.sluice.dashboard({})).toThrow(/auth is required/);
    expect(() => db.sluice.dashboard({ auth: false, basePath: 'admin/' })).toThrow(/option basePath must be ''/);
    expect(() => db.sluice.dashboard({ auth: false, readonly: true } as never)).toThrow(/did you mean readOnly/);
    expect(() => db.sluice.dashboard({ auth: false, refreshMs: 10 })).toThrow(/option refreshMs/);
    expect(() => basicAuth({ user: 'a:b', password: 'x' })).toThrow(/auth.user/);
  });

  it('mounts under a base path, leaves other paths to the app, and keeps redirects inside the dashboard', async () => {
    const id = await insertJob(db, {
      queue: 'mail',
      name: 'send',
      payload: { card: '4111 1111 1111 1111', to: 'a@b' },
    });
    const handler = db.sluice.dashboard({
      auth: false,
      basePath: '/ops/jobs',
      maskPayload: ({ payload }) => ({ ...(payload as object), card: 'hidden by the app' }),
    });
    const app = await serve(handler, '/ops/jobs');
    try {
      expect((await fetch(`${app.url}/elsewhere`)).status).toBe(418);
      const overview = await fetch(`${app.url}/ops/jobs`);
      expect(overview.status).toBe(200);
      const text = await overview.text();
      expect(text).toContain('href="/ops/jobs/queues/mail"');
      expect(text).toContain('src="/ops/jobs/assets/dashboard.js"');
      const job = await (await fetch(`${app.url}/ops/jobs/jobs/${id}`)).text();
      expect(job).toContain('hidden by the app');
      expect(job).not.toContain('4111');

      const cookie = (overview.headers.get('set-cookie') ?? '').split(';')[0] as string;
      expect(overview.headers.get('set-cookie')).toContain('Path=/ops/jobs; HttpOnly; SameSite=Strict');
      const csrf = cookie.split('=')[1] as string;
      const post = (back: string) =>
        fetch(`${app.url}/ops/jobs/actions/run-job-now`, {
          method: 'POST',
          headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ csrf, id: String(id), return: back }).toString(),
          redirect: 'manual',
        });
      const home = await post('/ops/jobs/queues/mail?state=waiting');
      expect(home.status).toBe(303);
      expect(home.headers.get('location')).toMatch(
        /^\/ops\/jobs\/queues\/mail\?state=waiting&notice=job-not-moved&notice_id=\d+$/,
      );
      for (const away of ['//evil.example/x', 'https://evil.example/', '/other-app']) {
        expect((await post(away)).headers.get('location')).toMatch(/^\/ops\/jobs\?notice=/);
      }
      expect(overview.headers.get('content-security-policy')).toContain("script-src 'self'");
    } finally {
      await app.close();
    }
  });

  it('accepts only a CSRF token signed for the same operator, from this site', async () => {
    const handler = db.sluice.dashboard({ auth: (req) => (req.headers['x-user'] as string | undefined) ?? null });
    const app = await serve(handler, '');
    try {
      const tokenOf = async (user: string) => {
        const response = await fetch(`${app.url}/`, { headers: { 'x-user': user } });
        return ((response.headers.get('set-cookie') ?? '').split(';')[0] as string).split('=')[1] as string;
      };
      const post = (user: string, token: string, headers: Record<string, string> = {}) =>
        fetch(`${app.url}/actions/pause-queue`, {
          method: 'POST',
          headers: {
            'x-user': user,
            cookie: `sluice_csrf=${token}`,
            'content-type': 'application/x-www-form-urlencoded',
            ...headers,
          },
          body: new URLSearchParams({ csrf: token, queue: 'q1', return: '/' }).toString(),
          redirect: 'manual',
        });
      const alice = await tokenOf('alice');
      // Another operator's token, a well-formed token with a forged signature, a sibling subdomain.
      expect((await post('bob', alice)).status).toBe(403);
      const [nonce] = alice.split('.');
      expect((await post('alice', `${nonce}.${'A'.repeat(43)}`)).status).toBe(403);
      expect((await post('alice', alice, { 'sec-fetch-site': 'same-site' })).status).toBe(403);
      expect((await post('alice', alice, { origin: 'http://evil.example' })).status).toBe(403);
      expect(await db.sluice.queues.paused()).toEqual([]);
      // Behind a proxy that keeps the public host in X-Forwarded-Host, the page's own Origin passes.
      const proxied = await post('alice', alice, { origin: 'https://ops.example', 'x-forwarded-host': 'ops.example' });
      expect(proxied.status).toBe(303);
      expect((await db.sluice.queues.paused()).map((p) => p.queue)).toEqual(['q1']);
    } finally {
      await app.close();
    }
  });

  it('the overview shows each queue’s promise, and a broken one as a problem', async () => {
    await db.sluice.queues.setPromise('kept', { maxReady: 10_000 });
    await db.sluice.queues.setPromise('late', { startWithinMs: 30_000, maxReady: 50 });
    await insertJob(db, { queue: 'late', runAt: ago(2 * MINUTE) });
    await insertJob(db, { queue: 'plain' });
    const maintenance = db.sluice.maintenance({ jitterMs: 0 });
    try {
      expect((await maintenance.runOnce()).tasks.checkQueues).toEqual({ broken: 1, kept: 0 });
    } finally {
      await maintenance.stop();
    }
    const app = await serve(db.sluice.dashboard({ auth: false }), '');
    try {
      const text = await (await fetch(`${app.url}/`)).text();
      const row = (queue: string) => new RegExp(`<tr data-queue="${queue}"[^]*?</tr>`).exec(text)?.[0] ?? '';
      expect(row('kept')).toContain('<td class="promise" data-promise="kept">at most 10,000 ready</td>');
      expect(row('kept')).not.toContain('class="problem"');
      expect(row('late')).toMatch(
        /<td class="promise bad" data-promise="broken">starts within 30 s · at most 50 ready: broken for \d+ ms<\/td>/,
      );
      expect(row('late')).toContain('class="problem"');
      expect(row('late')).toContain('promise broken');
      expect(row('plain')).toContain('<td class="promise">—</td>');
    } finally {
      await app.close();
    }
  });

  it('the overview names a job no running worker knows, on its queue’s row too', async () => {
    const { id } = await db.sluice.enqueue({ name: 'ghost', queue: 'newcode' });
    const worker = db.sluice.worker({
      queues: ['newcode'],
      jobs: [defineJob({ name: 'other', handle: () => undefined })],
      heartbeatIntervalMs: 100,
      maxPollIntervalMs: 60_000,
    });
    const app = await serve(db.sluice.dashboard({ auth: false }), '');
    await worker.start();
    try {
      await waitFor(async () => (await db.sluice.workers.unknownJobs()).length > 0, {
        what: 'the heartbeat naming it',
      });
      const text = await (await fetch(`${app.url}/`)).text();
      expect(text).toContain(
        '<p class="notice failure" data-unknown-job="ghost">No running worker knows job <code>ghost</code> (queue newcode): 1 worker(s) gave back 1 of its job(s), no attempt spent.',
      );
      const row = /<tr data-queue="newcode"[\s\S]*?<\/tr>/.exec(text)?.[0] ?? '';
      expect(row).toContain('class="problem"');
      expect(row).toContain('no running worker knows job ghost');
      expect(await db.query('SELECT retry_times FROM sluice_jobs WHERE id = ?', [id])).toEqual([{ retry_times: 0 }]);
    } finally {
      await worker.stop();
      await app.close();
    }
  });

  it('escapes every value it renders', () => {
    const payload = `<script>alert("x")</script>' & "`;
    expect(html`<td title="${payload}">${payload}</td>`.text).toBe(
      '<td title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; &amp; &quot;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; &amp; &quot;</td>',
    );
    expect(html`<ul>${['<b>', html`<i>${'<i>'}</i>`]}</ul>`.text).toBe('<ul>&lt;b&gt;<i>&lt;i&gt;</i></ul>');
    expect(escapeHtml('a<b')).toBe('a&lt;b');
    const script = jsonScript('data', { s: '</script><script>alert(1)</script><!--' }).text;
    expect(script.match(/<\/script>/g)).toHaveLength(1);
    expect(JSON.parse(script.replace(/^<script[^>]*>/, '').replace(/<\/script>$/, ''))).toEqual({
      s: '</script><script>alert(1)</script><!--',
    });
  });
});
