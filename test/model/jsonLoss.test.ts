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
});
