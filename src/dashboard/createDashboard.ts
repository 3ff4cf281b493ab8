import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SluiceApi } from '../api/SluiceApi.ts';
import { DashboardRequestError, OptionsError } from '../errors.ts';
import { errorFields } from '../errorText.ts';
import type { Action } from './actions/Action.ts';
import { CsrfTokens } from './csrf.ts';
import { type DashboardOptions, type ResolvedDashboardOptions, resolveDashboardOptions } from './dashboardOptions.ts';
import { html } from './html.ts';
import { layout } from './layout.ts';
import type { PageContext } from './PageContext.ts';
import { readAsset } from './readAsset.ts';
import { readForm } from './readForm.ts';
import { redirect, send } from './respond.ts';
import { findAction, matchPage } from './routes.ts';

/**
 * A Node request handler: `(req, res, next?)`. Mount it in an http server, or in Express/Fastify
 * (middie) under `basePath`; a request outside `basePath` goes to `next` when given, else 404.
 */
export type DashboardHandler = ((
  req: IncomingMessage,
  res: ServerResponse,
  next?: (error?: unknown) => void,
) => void) & {
  readonly options: ResolvedDashboardOptions;
};

/**
 * Builds the dashboard of one sluice install (Sluice#dashboard is the public way in). Every page
 * reads and acts through the install's public surface only, as an application would.
 */
export function createDashboard(sluice: SluiceApi, options: DashboardOptions): DashboardHandler {
  const resolved = resolveDashboardOptions(options, sluice.logger);
  const logger = resolved.logger.child({ component: 'dashboard' });
  const csrf = new CsrfTokens(resolved.csrfSecret);

  async function handle(req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void): Promise<void> {
    const url = new URL((req as { originalUrl?: string }).originalUrl ?? req.url ?? '/', 'http://dashboard.invalid');
    const base = resolved.basePath;
    if (url.pathname !== base && !url.pathname.startsWith(`${base}/`)) {
      if (next) return next();
      return send(res, 404, 'not found\n', { 'Content-Type': 'text/plain; charset=utf-8' });
    }
    const path = url.pathname.slice(base.length) || '/';
    const user = resolved.auth === false ? 'anonymous' : await resolved.auth(req);
    if (!user) {
      const challenge = resolved.auth === false ? undefined : resolved.auth.challenge;
      return send(res, 401, 'sluice dashboard: authentication required\n', {
        'Content-Type': 'text/plain; charset=utf-8',
        ...(challenge ? { 'WWW-Authenticate': challenge } : {}),
      });
    }
    const { token, setCookie } = csrf.issue(req, user, base);
    const cookie: Record<string, string> = setCookie ? { 'Set-Cookie': setCookie } : {};
    const ctx: PageContext = {
      sluice,
      options: resolved,
      path,
      query: url.searchParams,
      user,
      csrf: token,
      href: (to, query = {}) => {
        const params = new URLSearchParams();
        for (const [k, v] of Object.entries(query))
          if (v !== undefined && v !== null && v !== '') params.set(k, String(v));
        const search = params.toString();
        return `${base}${to === '/' && base !== '' ? '' : to}${search ? `?${search}` : ''}` || '/';
      },
    };
    try {
      if (req.method === 'POST') return await runAction(ctx, req, res);
      if (req.method !== 'GET' && req.method !== 'HEAD')
        throw new DashboardRequestError(405, 'method', `${req.method} is not served (GET pages, POST actions)`);
      const head = req.method === 'HEAD';
      if (path.startsWith('/assets/')) {
        const asset = await readAsset(path.slice('/assets/'.length));
        if (!asset) throw new DashboardRequestError(404, 'path', `no asset ${path}`);
        return send(res, 200, asset.body, { 'Content-Type': asset.type, 'Cache-Control': 'max-age=3600' }, head);
      }
      const route = matchPage(path);
      if (!route) throw new DashboardRequestError(404, 'path', `no page at ${path}`);
      const page = await route.page(ctx, route.params);
      if ('redirect' in page) return redirect(res, page.redirect, cookie);
      return send(res, page.status ?? 200, layout(ctx, page).text, cookie, head);
    } catch (error) {
      return fail(ctx, res, error, cookie);
    }
  }

  async function runAction(ctx: PageContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const action = findAction(ctx.path);
    if (!action) throw new DashboardRequestError(404, 'action', `no action at ${ctx.path}`);
    if (resolved.readOnly) {
      logger.warn({ event: 'dashboard:refused', user: ctx.user, action: action.name, reason: 'read-only' });
      throw new DashboardRequestError(403, action.name, 'the dashboard is read-only: actions are refused');
    }
    const form = await readForm(req);
    csrf.check(req, form, ctx.user);
    const target = action.target(form);
    if (action.destructive && form.get('confirmed') !== 'yes') {
      logger.warn({ event: 'dashboard:refused', user: ctx.user, action: action.name, target, reason: 'unconfirmed' });
      throw new DashboardRequestError(400, action.name, 'is destructive and was not confirmed: nothing was done');
    }
    const outcome = await run(action, ctx, form, target);
    const back = safeReturn(form.get('return'), resolved.basePath) ?? ctx.href('/');
    const location = new URL(back, 'http://dashboard.invalid');
    location.searchParams.set('notice', outcome.notice);
    return redirect(res, `${location.pathname}${location.search}`);
  }

  async function run(action: Action, ctx: PageContext, form: URLSearchParams, target: Record<string, unknown>) {
    try {
      const outcome = await action.run(ctx, form);
      logger.info(
        { event: 'dashboard:action', user: ctx.user, action: action.name, target, count: outcome.count },
        `dashboard: ${ctx.user} ran ${action.name} (${outcome.count})`,
      );
      return outcome;
    } catch (error) {
      logger.warn({
        event: 'dashboard:action-failed',
        user: ctx.user,
        action: action.name,
        target,
        err: errorFields(error),
      });
      throw error;
    }
  }

  function fail(ctx: PageContext, res: ServerResponse, error: unknown, headers: Record<string, string>): void {
    const known = error instanceof DashboardRequestError || error instanceof OptionsError;
    const status = error instanceof DashboardRequestError ? error.status : known ? 400 : 500;
    if (!known)
      logger.error({ event: 'dashboard:failed', path: ctx.path, err: errorFields(error) }, 'dashboard: a page failed');
    // The message of an unexpected error may name a host or a query: the page says only where to look.
    const message = known ? (error as Error).message : 'the page could not be read from the database; see the log';
    const body = html`<p class="notice failure" role="alert" data-status="${status}">${message}</p>`;
    send(res, status, layout(ctx, { title: `Error ${status}`, section: '', body }).text, headers);
  }

  const handler = (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void) => {
    handle(req, res, next).catch((error: unknown) => {
      logger.error({ event: 'dashboard:failed', err: errorFields(error) }, 'dashboard: request failed');
      if (!res.headersSent)
        send(res, 500, 'sluice dashboard: internal error; see the log\n', { 'Content-Type': 'text/plain' });
      else res.destroy();
    });
  };
  return Object.assign(handler, { options: resolved });
}

/** Where an action sends the browser back: a dashboard path only (never another site, never `//host`). */
function safeReturn(value: string | null, basePath: string): string | null {
  if (!value?.startsWith('/') || value.startsWith('//') || value.includes('\\')) return null;
  const path = value.split('?')[0] as string;
  if (path !== basePath && !path.startsWith(`${basePath}/`)) return null;
  return value;
}
