import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { DashboardRequestError } from '../errors.ts';

/**
 * CSRF protection by double submit: each browser gets a random token in an HttpOnly,
 * SameSite=Strict cookie scoped to the dashboard's path, and every form carries the same token in
 * a hidden field. A page of another site can make the browser POST (without the cookie, under
 * SameSite=Strict) but can read neither, so it cannot forge the pair. The Origin header, when the
 * browser sends one, must name this host, and a cross-site Sec-Fetch-Site is refused outright.
 */
const COOKIE = 'sluice_csrf';
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** The browser's token, or a new one with the Set-Cookie header that gives it. */
export function csrfToken(req: IncomingMessage, basePath: string): { token: string; setCookie: string | null } {
  const existing = cookieToken(req);
  if (existing) return { token: existing, setCookie: null };
  const token = randomBytes(32).toString('base64url');
  return { token, setCookie: `${COOKIE}=${token}; Path=${basePath || '/'}; HttpOnly; SameSite=Strict` };
}

/** Throws DashboardRequestError (403) unless this POST carries the browser's own token from a same-origin page. */
export function checkCsrf(req: IncomingMessage, form: URLSearchParams): void {
  if (req.headers['sec-fetch-site'] === 'cross-site')
    throw new DashboardRequestError(403, 'request', 'cross-site requests are refused');
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== 'null') {
    let host: string;
    try {
      host = new URL(origin).host;
    } catch {
      throw new DashboardRequestError(403, 'Origin', `is not a URL (${JSON.stringify(origin)})`);
    }
    if (host !== req.headers.host)
      throw new DashboardRequestError(403, 'Origin', `${JSON.stringify(origin)} is not this dashboard's host`);
  }
  const cookie = cookieToken(req);
  const field = form.get('csrf') ?? '';
  if (!cookie) throw new DashboardRequestError(403, 'csrf', 'no CSRF cookie: reload the page and try again');
  if (!TOKEN.test(field) || !timingSafeEqual(Buffer.from(field), Buffer.from(cookie)))
    throw new DashboardRequestError(403, 'csrf', 'the form token does not match: reload the page and try again');
}

function cookieToken(req: IncomingMessage): string | null {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [name, value] = part.trim().split('=');
    if (name === COOKIE && value && TOKEN.test(value)) return value;
  }
  return null;
}
