import { describe, expect, it } from 'vitest';
import { type ChunkLimits, chunkLimitsFor, planChunks } from '../../src/db/planChunks.ts';

const PREFIX = 'INSERT INTO t (a) VALUES ';

/** Deterministic pseudo-random tuple sizes (a tiny LCG), so a failure reproduces. */
function tuples(count: number, seed: number, maxLen: number): string[] {
  let state = seed;
  const next = () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state;
  };
  return Array.from({ length: count }, (_, i) => {
    // Mix in multi-byte characters: limits are in bytes, not UTF-16 units.
    const body = `${i}:${'é'.repeat(next() % maxLen)}${'x'.repeat(next() % maxLen)}`;
    return `('${body}')`;
  });
}

function tuplesOf(statement: string): string[] {
  expect(statement.startsWith(PREFIX)).toBe(true);
  return statement.slice(PREFIX.length).match(/\('[^']*'\)/g) ?? [];
}

function plan(input: string[], limits: ChunkLimits): string[] {
  return [...planChunks(PREFIX, input, limits)];
}

describe('planChunks', () => {
  it.each([
    { rows: 2_000, seed: 1, maxLen: 40, limits: { maxBytes: 1_000, maxRows: 1_000 } },
    { rows: 2_000, seed: 2, maxLen: 40, limits: { maxBytes: 100_000, maxRows: 7 } },
    { rows: 5_000, seed: 3, maxLen: 200, limits: { maxBytes: 4_096, maxRows: 50 } },
    { rows: 1, seed: 4, maxLen: 10, limits: { maxBytes: 1_000, maxRows: 1 } },
  ])(
    'keeps every statement within $limits.maxBytes bytes and $limits.maxRows rows, in order ($rows rows)',
    ({ rows, seed, maxLen, limits }) => {
      const input = tuples(rows, seed, maxLen);
      const statements = plan(input, limits);
      for (const statement of statements) {
        expect(Buffer.byteLength(statement)).toBeLessThanOrEqual(limits.maxBytes);
        const parts = tuplesOf(statement);
        expect(parts.length).toBeGreaterThan(0);
        expect(parts.length).toBeLessThanOrEqual(limits.maxRows);
        expect(statement).toBe(PREFIX + parts.join(','));
      }
      // Nothing lost, nothing repeated, order preserved across chunk boundaries.
      expect(statements.flatMap(tuplesOf)).toEqual(input);
    },
  );

  it('fills chunks: a statement ends only when the next tuple would break a limit', () => {
    const input = tuples(3_000, 7, 60);
    const limits = { maxBytes: 2_000, maxRows: 40 };
    const statements = plan(input, limits);
    for (let i = 0; i < statements.length - 1; i++) {
      const current = statements[i] as string;
      const rows = tuplesOf(current).length;
      const next = tuplesOf(statements[i + 1] as string)[0] as string;
      const grown = Buffer.byteLength(current) + 1 + Buffer.byteLength(next);
      // The planner reserves one separator byte per tuple, so it may stop one byte early.
      expect(rows === limits.maxRows || grown + 1 > limits.maxBytes, `chunk ${i} stopped early`).toBe(true);
    }
  });

  it('packs equal tuples evenly', () => {
    const input = Array.from({ length: 10 }, (_, i) => `('${String(i).padStart(6, '0')}')`); // 10 bytes each
    // prefix + 5 tuples + 5 separators budgeted = 25 + 55 = 80 bytes.
    const statements = plan(input, { maxBytes: Buffer.byteLength(PREFIX) + 55, maxRows: 100 });
    expect(statements.map((s) => tuplesOf(s).length)).toEqual([5, 5]);
  });

  it('sends a tuple larger than maxBytes alone, between its neighbours’ chunks', () => {
    const huge = `('${'h'.repeat(5_000)}')`;
    const input = [...tuples(30, 11, 20), huge, ...tuples(30, 12, 20)];
    const limits = { maxBytes: 1_000, maxRows: 1_000 };
    const statements = plan(input, limits);
    const alone = statements.filter((s) => s.includes(huge));
    expect(alone).toEqual([PREFIX + huge]);
    expect(statements.flatMap(tuplesOf)).toEqual(input);
    for (const statement of statements) {
      if (statement !== PREFIX + huge) expect(Buffer.byteLength(statement)).toBeLessThanOrEqual(limits.maxBytes);
    }
  });

  it('sends two oversized tuples in a row as two statements', () => {
    const a = `('${'a'.repeat(3_000)}')`;
    const b = `('${'b'.repeat(3_000)}')`;
    expect(plan([a, b, "('c')"], { maxBytes: 1_000, maxRows: 10 })).toEqual([PREFIX + a, PREFIX + b, `${PREFIX}('c')`]);
  });

  it('yields nothing for no tuples', () => {
    expect(plan([], { maxBytes: 1_000, maxRows: 10 })).toEqual([]);
  });

  it('pulls tuples lazily: one chunk (plus one look-ahead) at a time', () => {
    let pulled = 0;
    function* source(): Generator<string> {
      for (let i = 0; i < 1_000; i++) {
        pulled++;
        yield `('${i}')`;
      }
    }
    const iterator = planChunks(PREFIX, source(), { maxBytes: 1_000_000, maxRows: 10 });
    const first = iterator.next();
    expect(first.done).toBe(false);
    expect(tuplesOf(first.value as string)).toHaveLength(10);
    expect(pulled).toBeLessThanOrEqual(11);
  });
});

describe('chunkLimitsFor', () => {
  it('stays below max_allowed_packet with headroom and caps at 4 MiB', () => {
    expect(chunkLimitsFor(16 * 1024 * 1024, 5_000)).toEqual({
      maxBytes: 4 * 1024 * 1024,
      maxRows: 5_000,
      maxStatementBytes: 16 * 1024 * 1024 - 64 * 1024,
    });
    expect(chunkLimitsFor(1024 * 1024, 100)).toEqual({
      maxBytes: 1024 * 1024 - 64 * 1024,
      maxRows: 100,
      maxStatementBytes: 1024 * 1024 - 64 * 1024,
    });
    expect(chunkLimitsFor(1024 * 1024, 100).maxBytes).toBeLessThan(1024 * 1024);
  });
});
