import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { DashboardRequestError } from '../errors.ts';

/**
 * CSRF protection. Each browser gets a token in an HttpOnly, SameSite=Strict cookie scoped to the
 * dashboard's path (Secure when served over HTTPS), and every form carries the same token in a hidden field (double submit): a
 * page of another site can make the browser POST but can read neither. The token is a nonce
 * signed (HMAC) with the dashboard's secret and the operator's name, so a token planted from a
 * sibling subdomain (cookie tossing) or minted for another operator does not verify. A POST whose
 * browser says it comes from another site or a sibling subdomain (Sec-Fetch-Site) is refused
 * outright, and so is one whose Origin names another host (Host, or X-Forwarded-Host behind a
 * proxy: a cross-site form cannot set that header).
 */
const COOKIE = 'sluice_csrf';
const TOKEN = /^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/;

export class CsrfTokens {
  readonly #secret: Buffer;

  constructor(secret: string | null) {
    this.#secret = secret === null ? randomBytes(32) : Buffer.from(secret, 'utf8');
  }

  /** The browser's token when it is valid for this operator, or a new one with the Set-Cookie header that gives it. */
  issue(req: IncomingMessage, user: string, basePath: string): { token: string; setCookie: string | null } {
    const existing = cookieToken(req);
    if (existing && this.#verifies(existing, user)) return { token: existing, setCookie: null };
    const nonce = randomBytes(16).toString('base64url');
    const token = `${nonce}.${this.#mac(nonce, user)}`;
    const secure = servedOverHttps(req) ? '; Secure' : '';
    return { token, setCookie: `${COOKIE}=${token}; Path=${basePath || '/'}; HttpOnly; SameSite=Strict${secure}` };
  }

  /** Throws DashboardRequestError (403) unless this POST carries this operator's own token from a same-origin page. */
  check(req: IncomingMessage, form: URLSearchParams, user: string): void {
    const site = req.headers['sec-fetch-site'];
    if (site === 'cross-site' || site === 'same-site')
      throw new DashboardRequestError(403, 'request', `${site} requests are refused`);
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== 'null') {
      let host: string;
      try {
        host = new URL(origin).host;
      } catch {
        throw new DashboardRequestError(403, 'Origin', `is not a URL (${JSON.stringify(origin)})`);
      }
      const forwarded = req.headers['x-forwarded-host'];
      const hosts = [req.headers.host, ...(typeof forwarded === 'string' ? forwarded.split(',') : [])].map((h) =>
        h?.trim(),
      );
      if (!hosts.includes(host))
        throw new DashboardRequestError(403, 'Origin', `${JSON.stringify(origin)} is not this dashboard's host`);
    }
    const cookie = cookieToken(req);
    const field = form.get('csrf') ?? '';
    if (!cookie) throw new DashboardRequestError(403, 'csrf', 'no CSRF cookie: reload the page and try again');
    if (!TOKEN.test(field) || !timingSafeEqual(Buffer.from(field), Buffer.from(cookie)) || !this.#verifies(field, user))
      throw new DashboardRequestError(403, 'csrf', 'the form token does not match: reload the page and try again');
  }

  #mac(nonce: string, user: string): string {
    return createHmac('sha256', this.#secret).update(`${user}\n${nonce}`).digest('base64url');
  }

  #verifies(token: string, user: string): boolean {
    const [nonce = '', mac = ''] = token.split('.');
    const expected = this.#mac(nonce, user);
    return mac.length === expected.length && timingSafeEqual(Buffer.from(mac), Buffer.from(expected));
  }
}

/**
 * Whether the browser reached the dashboard over HTTPS: a TLS socket of our own, or a proxy that
 * says so (X-Forwarded-Proto). Then the cookie is Secure: never sent over plain HTTP. Believing
 * the header costs nothing: a forged one only keeps the cookie from coming back over HTTP.
 */
function servedOverHttps(req: IncomingMessage): boolean {
  if ((req.socket as { encrypted?: boolean }).encrypted === true) return true;
  const proto = req.headers['x-forwarded-proto'];
  return typeof proto === 'string' && proto.split(',')[0]?.trim().toLowerCase() === 'https';
}

function cookieToken(req: IncomingMessage): string | null {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [name, value] = part.trim().split('=');
    if (name === COOKIE && value && TOKEN.test(value)) return value;
  }
  return null;
}
