/**
 * Where a payload is stored: in its job's row, or apart in job_payloads (keyed by the job's id)
 * with '' in the row. Not an option: over this size the hot row a claim updates in place stays
 * narrow and a completion copies a few bytes into the history instead of the payload; under it a
 * second table's row costs the enqueue more than the copy saves (docs/how-it-works.md, payloads).
 */
export const PAYLOAD_INLINE_MAX_BYTES = 1024;

/** What the row holds when its payload is stored apart: '' is never valid JSON, so never a payload. */
export const PAYLOAD_APART = '';

/** Pure: true when `payload` (JSON text) goes to job_payloads. Its length in UTF-16 units (at most its bytes): no encoding pass. */
export function storedApart(payload: string): boolean {
  return payload.length > PAYLOAD_INLINE_MAX_BYTES;
}
