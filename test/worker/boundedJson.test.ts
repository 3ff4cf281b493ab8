import { describe, expect, it } from 'vitest';
import { boundedJson } from '../../src/worker/boundedJson.ts';

/**
 * boundedJson (a handler's result and progress): JSON.stringify's text when it fits, and a reason
 * when it does not — found while walking the value, so a 200 MB return value is not written out
 * in full only to be measured against a 64 KiB limit.
 */
describe('boundedJson', () => {
  it('keeps what fits, exactly as JSON.stringify writes it', () => {
    const value = { a: [1, 'two', null, undefined], b: { skipped: undefined, f: () => 1 }, at: new Date(0) };
    const json = JSON.stringify(value);
    expect(boundedJson(value, Buffer.byteLength(json))).toEqual({ json });
    expect(boundedJson(value, Buffer.byteLength(json) - 1)).toEqual({
      problem: `is ${Buffer.byteLength(json)} bytes as JSON, over the limit of ${Buffer.byteLength(json) - 1}`,
    });
    expect(boundedJson(undefined, 10)).toEqual({ json: null });
    expect(boundedJson({ n: 10n }, 100)).toEqual({ problem: expect.stringContaining('not JSON-serialisable') });
  });

  it('stops walking a value once its JSON is surely over the limit', () => {
    // 100,000 entries of 1 KiB (100 MB as JSON), each counting the times it is turned into JSON.
    let visited = 0;
    const entry = {
      toJSON: () => {
        visited++;
        return 'x'.repeat(1_024);
      },
    };
    const huge = Array.from({ length: 100_000 }, () => entry);
    const kept = boundedJson(huge, 64 * 1024);
    expect(visited).toBeLessThanOrEqual(64);
    expect(kept).toEqual({
      problem: expect.stringMatching(/^is at least \d+ bytes as JSON, over the limit of 65536$/),
    });
  });
});
