/**
 * Pure: groups pre-rendered VALUES tuples into multi-row INSERT statements that each fit the
 * server's packet limit and a row cap, lazily, so memory holds one chunk at a time.
 */
export interface ChunkLimits {
  /** Largest statement in bytes (below max_allowed_packet, with headroom for protocol overhead). */
  readonly maxBytes: number;
  /** Largest number of rows in one statement. */
  readonly maxRows: number;
}

/** A server's chunk limits, and the largest statement it accepts at all (max_allowed_packet less headroom). */
export interface ServerChunkLimits extends ChunkLimits {
  readonly maxStatementBytes: number;
}

/** Headroom left under max_allowed_packet for the packet header and the statement prefix. */
const PACKET_HEADROOM_BYTES = 64 * 1024;
/**
 * The largest statement counted on whatever the server's packet limit: a statement this small
 * needs no look-up of the limit (a single enqueue's common INSERT is always below it).
 */
export const MIN_STATEMENT_BYTES = 16 * 1024;
/** Larger statements gain nothing measurable and make a failed chunk costlier to roll back. */
const DEFAULT_MAX_CHUNK_BYTES = 4 * 1024 * 1024;

export function chunkLimitsFor(maxAllowedPacket: number, maxRows: number): ServerChunkLimits {
  const maxStatementBytes = Math.max(MIN_STATEMENT_BYTES, maxAllowedPacket - PACKET_HEADROOM_BYTES);
  return { maxBytes: Math.min(DEFAULT_MAX_CHUNK_BYTES, maxStatementBytes), maxRows, maxStatementBytes };
}

/** Yields `prefix + tuple,tuple,…` statements. A tuple larger than maxBytes travels alone. */
export function* planChunks(prefix: string, tuples: Iterable<string>, limits: ChunkLimits): Generator<string> {
  for (const chunk of planCountedChunks(prefix, tuples, limits)) yield chunk.sql;
}

/** As planChunks, with the number of rows each statement carries. */
export function* planCountedChunks(
  prefix: string,
  tuples: Iterable<string>,
  limits: ChunkLimits,
): Generator<{ sql: string; rows: number }> {
  let parts: string[] = [];
  let bytes = Buffer.byteLength(prefix);
  const base = bytes;
  for (const tuple of tuples) {
    const size = Buffer.byteLength(tuple) + 1;
    if (parts.length > 0 && (bytes + size > limits.maxBytes || parts.length >= limits.maxRows)) {
      yield { sql: prefix + parts.join(','), rows: parts.length };
      parts = [];
      bytes = base;
    }
    parts.push(tuple);
    bytes += size;
  }
  if (parts.length > 0) yield { sql: prefix + parts.join(','), rows: parts.length };
}
