import { describe, expect, it } from 'vitest';
import {
  PACKED_PREFIX,
  PAYLOAD_INLINE_MAX_BYTES,
  packPayload,
  storedApart,
  storedPayloadJson,
  storedPayloadOrAsIs,
} from '../../src/model/storedPayload.ts';
import { randomText } from '../helpers/randomText.ts';

const json = (value: unknown) => JSON.stringify(value);

/** Text of `length` drawn from a few hundred words: halves when deflated, but no more. */
function words(length: number): string {
  const vocabulary = Array.from({ length: 400 }, (_, i) => randomText(3 + (i % 7), i + 1).toLowerCase());
  let state = 7;
  let text = '';
  while (text.length < length) {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    text += `${vocabulary[state % vocabulary.length]} `;
  }
  return text.slice(0, length);
}

describe('packPayload', () => {
  it('keeps JSON that fits the row as it is, however well it would pack', () => {
    const text = json({ pad: 'x'.repeat(PAYLOAD_INLINE_MAX_BYTES - 10) });
    expect(text.length).toBe(PAYLOAD_INLINE_MAX_BYTES);
    expect(packPayload(text)).toBe(text);
  });

  it('packs longer JSON into the row when it fits there, and reads it back exactly, as text and as bytes', () => {
    const text = json({ pad: 'x'.repeat(16_000), emoji: '😀 中文 ä', quote: '"\\', lines: [1, 2, 3] });
    const packed = packPayload(text);
    expect(packed.startsWith(PACKED_PREFIX)).toBe(true);
    expect(storedApart(packed)).toBe(false);
    expect(storedPayloadJson(packed)).toBe(text);
    expect(storedPayloadJson(Buffer.from(packed, 'utf8'))).toBe(text);
  });

  it('packs a long array of like records, and judges a long payload by its first KiB', () => {
    const records = json(Array.from({ length: 1_000 }, (_, i) => ({ id: i % 10, sku: 'SKU-1', qty: 1 })));
    expect(records.length).toBeGreaterThan(30_000);
    expect(packPayload(records).startsWith(PACKED_PREFIX)).toBe(true);
    // Its first KiB does not pack: kept as JSON without deflating the rest, which would have.
    const busyStart = json({ head: randomText(1_000), rest: 'ab'.repeat(20_000) });
    expect(packPayload(busyStart)).toBe(busyStart);
  });

  it('keeps as JSON what would stay apart even packed (text that only halves), and what does not pack', () => {
    for (const text of [json({ text: words(8_000) }), json({ random: randomText(16_000) })]) {
      expect(text.length).toBeGreaterThan(PAYLOAD_INLINE_MAX_BYTES);
      expect(packPayload(text)).toBe(text);
      expect(storedApart(text)).toBe(true);
    }
  });

  it('reads JSON as it is, as text and as bytes, multi-byte included', () => {
    const text = json({ v: '😀 ä' });
    expect(storedPayloadJson(text)).toBe(text);
    expect(storedPayloadJson(Buffer.from(text, 'utf8'))).toBe(text);
  });

  it('the prefix is never how JSON starts', () => {
    expect(() => JSON.parse(`${PACKED_PREFIX}e30=`)).toThrow();
  });

  it('packed text that does not unpack throws saying so; the tolerant reader returns it as it is', () => {
    const broken = `${PACKED_PREFIX}bm90IGRlZmxhdGU=`;
    expect(() => storedPayloadJson(broken)).toThrow(/packed payload does not unpack/);
    expect(() => storedPayloadJson(Buffer.from(broken))).toThrow(/packed payload does not unpack/);
    expect(storedPayloadOrAsIs(broken)).toBe(broken);
  });
});
