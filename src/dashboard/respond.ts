import type { ServerResponse } from 'node:http';

/**
 * Headers every response carries: the page may load only its own files and talk only to its own
 * origin (a payload that slipped past escaping could still not run a script), may not be framed,
 * and is never cached (it shows live data and a CSRF token).
 */
const SECURITY_HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'same-origin',
  'X-Frame-Options': 'DENY',
} as const;

export function send(
  res: ServerResponse,
  status: number,
  body: string | Buffer,
  headers: Record<string, string> = {},
  head = false,
): void {
  const payload = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    'Content-Type': 'text/html; charset=utf-8',
    'Cache-Control': 'no-store',
    'Content-Length': String(payload.length),
    ...headers,
  });
  res.end(head ? undefined : payload);
}

export function redirect(res: ServerResponse, location: string, headers: Record<string, string> = {}): void {
  send(res, 303, '', { ...headers, Location: location });
}
