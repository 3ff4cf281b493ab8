import { describe, expect, it } from 'vitest';
import { jsonLoss } from '../../src/model/jsonLoss.ts';

/** jsonLoss: where JSON.stringify would store a value changed, named by its path; null for plain data. */
describe('jsonLoss', () => {
  it('passes plain data and what JSON converts as documented, exactly where JSON.stringify keeps it', () => {
    const plain = {
      s: 'é',
      n: -0,
      b: false,
      z: null,
      a: [1, [2, { c: 'd' }]],
      at: new Date(0),
      skipped: undefined,
      own: { toJSON: () => ({ kept: [1] }) },
      bare: Object.create(null) as object,
    };
    expect(jsonLoss(plain, 'payload')).toBeNull();
    expect(jsonLoss('text', 'payload')).toBeNull();
  });

  it('names the first loss in JSON.stringify’s order', () => {
    expect(jsonLoss({ a: [1, { b: Number.NaN }], c: () => 1 }, 'payload')).toEqual({
      path: 'payload.a[1].b',
      reason: 'is NaN, which JSON stores as null',
    });
    expect(jsonLoss(Number.NEGATIVE_INFINITY, 'result')).toEqual({
      path: 'result',
      reason: 'is -Infinity, which JSON stores as null',
    });
  });

  it('follows a toJSON into what it returns, with the key JSON gives it', () => {
    const keys: string[] = [];
    const value = {
      x: {
        toJSON(key: string) {
          keys.push(key);
          return { inner: [undefined] };
        },
      },
    };
    expect(jsonLoss(value, 'payload')?.path).toBe('payload.x.inner[0]');
    expect(jsonLoss([1, value.x], 'payload')?.path).toBe('payload[1].inner[0]');
    expect(keys).toEqual(['x', '1']);
  });

  it('quotes a key that is no identifier and keeps a deep path within its bound, saying so', () => {
    expect(jsonLoss({ 'a"b': 1n }, 'payload')?.path).toBe('payload["a\\"b"]');
    let deep: unknown = new Map();
    for (let i = 0; i < 100; i++) deep = { level: deep };
    const loss = jsonLoss(deep, 'payload');
    expect(loss?.path.startsWith('payload…')).toBe(true);
    expect(loss?.path.endsWith('.level.level')).toBe(true);
    expect(loss?.path.length).toBe(200);
  });

  it('finds a cycle without walking it forever, and a shared object that is no cycle is fine', () => {
    const shared = { k: 1 };
    expect(jsonLoss({ a: shared, b: [shared, shared] }, 'payload')).toBeNull();
    const loop: Record<string, unknown> = {};
    loop.me = [loop];
    expect(jsonLoss(loop, 'payload')).toEqual({
      path: 'payload.me[0]',
      reason: 'is an object that contains it (a cycle), which JSON cannot store',
    });
  });

  it('sends what only looks plain to the full walk: hidden or inherited toJSON, symbol keys, holes, odd Dates', () => {
    const hidden = { a: 1 };
    Object.defineProperty(hidden, 'toJSON', { value: () => ({ n: Number.NaN }), enumerable: false });
    expect(jsonLoss({ hidden }, 'payload')?.path).toBe('payload.hidden.n');
    const list = [1, 2];
    Object.defineProperty(list, 'toJSON', { value: () => [() => 1], enumerable: false });
    expect(jsonLoss({ list }, 'payload')?.path).toBe('payload.list[0]');
    const bare = Object.create(null) as Record<string | symbol, unknown>;
    bare[Symbol('s')] = 1;
    expect(jsonLoss({ bare }, 'payload')?.reason).toContain('symbol key');
    // biome-ignore lint/suspicious/noSparseArray: a hole is what this checks
    expect(jsonLoss({ a: [1, , 3] }, 'payload')?.path).toBe('payload.a[1]');
    const date = new Date(0);
    Object.defineProperty(date, 'toJSON', { value: () => Number.POSITIVE_INFINITY });
    expect(jsonLoss({ date }, 'payload')?.path).toBe('payload.date');
    class Stamp extends Date {}
    expect(jsonLoss({ at: new Stamp(0), bad: new Stamp(Number.NaN) }, 'payload')?.path).toBe('payload.bad');
    const deep: unknown[] = [];
    let at = deep;
    for (let i = 0; i < 200; i++) {
      const next: unknown[] = [];
      at.push(next);
      at = next;
    }
    at.push(Number.NaN);
    expect(jsonLoss(deep, 'result')?.reason).toBe('is NaN, which JSON stores as null');
    Object.defineProperty(Object.prototype, 'toJSON', { value: () => 1n, configurable: true, writable: true });
    try {
      expect(jsonLoss({ a: 1 }, 'payload')?.reason).toContain('BigInt');
    } finally {
      delete (Object.prototype as { toJSON?: unknown }).toJSON;
    }
  });
});
