import { once } from 'node:events';
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

/** A download's text is written in chunks of about this many characters. */
const DOWNLOAD_CHUNK = 64 * 1024;

/**
 * Most bytes one download sends: a stored value is at most a MEDIUMTEXT (16 MiB), and masking may
 * lengthen it a little. A download that would pass it is cut off (the browser reports it failed).
 */
const MAX_DOWNLOAD_BYTES = 32 * 1024 * 1024;

/**
 * Sends a file's text as it is made, a chunk at a time, waiting for the client to take each one
 * (so a large value is never held twice, and a slow client slows only its own download).
 */
export async function sendDownload(
  res: ServerResponse,
  file: { readonly filename: string; readonly pieces: Iterable<string> },
  headers: Record<string, string> = {},
  head = false,
): Promise<void> {
  res.writeHead(200, {
    ...SECURITY_HEADERS,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Disposition': `attachment; filename="${file.filename.replace(/[^\w.-]/g, '_')}"`,
    'Cache-Control': 'no-store',
    ...headers,
  });
  if (head) return void res.end();
  let chunk = '';
  let sent = 0;
  for (const piece of file.pieces) {
    chunk += piece;
    if (chunk.length < DOWNLOAD_CHUNK) continue;
    sent += Buffer.byteLength(chunk);
    if (sent > MAX_DOWNLOAD_BYTES || res.destroyed) return void res.destroy();
    if (!res.write(chunk)) await Promise.race([once(res, 'drain'), once(res, 'close')]);
    chunk = '';
  }
  res.end(chunk);
}
