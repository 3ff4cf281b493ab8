import type { Readable } from 'node:stream';

/** A line longer than the reader accepts: it was not read to its end. */
export class LineTooLongError extends Error {
  constructor(
    readonly line: number,
    readonly maxBytes: number,
  ) {
    super(`is longer than ${maxBytes} bytes (a job's JSON may be at most maxPayloadBytes plus its fields)`);
  }
}

/**
 * The lines of a stream (LF or CRLF), each at most `maxBytes`: a longer line is refused as soon
 * as it passes the limit, without holding the rest of it — a 200 MB line must not take 200 MB
 * before it is rejected. Memory is one line at most, plus one chunk of the stream.
 */
export async function* boundedLines(input: Readable, maxBytes: number): AsyncGenerator<string> {
  let parts: Buffer[] = [];
  let length = 0;
  let lineNo = 1;
  for await (const chunk of input as AsyncIterable<Buffer | string>) {
    let buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    for (;;) {
      const end = buffer.indexOf(0x0a);
      const piece = end < 0 ? buffer : buffer.subarray(0, end);
      length += piece.length;
      if (length > maxBytes) throw new LineTooLongError(lineNo, maxBytes);
      parts.push(piece);
      if (end < 0) break;
      yield lineText(parts);
      parts = [];
      length = 0;
      lineNo++;
      buffer = buffer.subarray(end + 1);
    }
  }
  if (length > 0) yield lineText(parts);
}

function lineText(parts: Buffer[]): string {
  const text = Buffer.concat(parts).toString('utf8');
  return text.endsWith('\r') ? text.slice(0, -1) : text;
}
