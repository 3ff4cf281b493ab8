/**
 * Pure: compares two strings in binary (UTF-8 byte) order, as utf8mb4_bin sorts a key. Rows locked
 * in this order by every writer are locked in one global order, so they never deadlock on each other.
 */
export function binaryOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}
