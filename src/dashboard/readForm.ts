import type { IncomingMessage } from 'node:http';
import { DashboardRequestError } from '../errors.ts';

/** The most a form body may hold: actions carry a few short fields. */
const MAX_FORM_BYTES = 16 * 1024;

/** A POST's urlencoded form, or DashboardRequestError for another content type or an oversized body. */
export async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded')
    throw new DashboardRequestError(
      415,
      'Content-Type',
      `must be application/x-www-form-urlencoded (got ${JSON.stringify(type)})`,
    );
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_FORM_BYTES) throw new DashboardRequestError(413, 'body', `is over ${MAX_FORM_BYTES} bytes`);
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}
