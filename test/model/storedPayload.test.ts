import { deflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { PayloadRefusedError } from '../../src/errors.ts';
import { MAX_PAYLOAD_BYTES } from '../../src/maxPayloadBytes.ts';
import {
  PACKED_PREFIX,
  PAYLOAD_INLINE_MAX_BYTES,
  packPayload,
  shownPayload,
  storedApart,
  storedPayloadJson,
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
    expect(storedPayloadJson(packed, 'row')).toBe(text);
    expect(storedPayloadJson(Buffer.from(packed, 'utf8'), 'row')).toBe(text);
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
    expect(storedPayloadJson(text, 'row')).toBe(text);
    expect(storedPayloadJson(Buffer.from(text, 'utf8'), 'apart')).toBe(text);
  });

  it('the prefix is never how JSON starts', () => {
    expect(() => JSON.parse(`${PACKED_PREFIX}e30=`)).toThrow();
  });

  it('packed text that does not unpack is refused saying so; the reader that shows payloads says why', () => {
    const broken = `${PACKED_PREFIX}bm90IGRlZmxhdGU=`;
    expect(() => storedPayloadJson(broken, 'row')).toThrow(/^payload refused: packed text does not unpack/);
    expect(() => storedPayloadJson(Buffer.from(broken), 'row')).toThrow(PayloadRefusedError);
    expect(shownPayload(broken, 'row')).toEqual({ payload: null, refused: expect.stringMatching(/does not unpack/) });
    expect(shownPayload('{not json', 'row')).toEqual({ payload: '{not json', refused: null });
    expect(shownPayload('{"a":1}', 'apart')).toEqual({ payload: { a: 1 }, refused: null });
  });
});

describe('reading a stored payload: only what sluice writes, within a bound', () => {
  /** Packed text of `bytes` zeros: ~1,000 times shorter than what it unpacks to. */
  const packedZeros = (bytes: number) => PACKED_PREFIX + deflateRawSync(Buffer.alloc(bytes, '0')).toString('base64');

  it('refuses packed text longer than a row holds before unpacking it (85 KB would unpack to ~63 MB)', () => {
    const bomb = packedZeros(63 * 1024 * 1024);
    expect(bomb.length).toBeGreaterThan(80_000);
    for (const stored of [bomb, Buffer.from(bomb)]) {
      const error = (() => {
        try {
          storedPayloadJson(stored, 'row');
        } catch (e) {
          return e;
        }
      })();
      expect(error).toBeInstanceOf(PayloadRefusedError);
      expect(error).toMatchObject({ code: 'SLUICE_PAYLOAD_REFUSED' });
      expect((error as Error).message).toBe(
        `payload refused: packed text of ${bomb.length} characters (sluice packs into at most ${PAYLOAD_INLINE_MAX_BYTES})`,
      );
    }
  });

  it('refuses packed text read from job_payloads, where sluice never stores it', () => {
    const packed = packPayload(json({ pad: 'x'.repeat(16_000) }));
    expect(packed.startsWith(PACKED_PREFIX)).toBe(true);
    expect(() => storedPayloadJson(packed, 'apart')).toThrow(/^payload refused: packed text stored apart/);
    expect(() => storedPayloadJson(Buffer.from(packed), 'apart')).toThrow(PayloadRefusedError);
  });

  it('packed text that fits the row unpacks to under a MiB: zeros, the best deflate packs, fill 1000 characters with 750 KB', () => {
    const most = packedZeros(750_000);
    expect(most.length).toBeLessThanOrEqual(PAYLOAD_INLINE_MAX_BYTES);
    expect(storedPayloadJson(most, 'row')).toHaveLength(750_000);
    expect(MAX_PAYLOAD_BYTES).toBeGreaterThan(1024 * 1024);
  });

  it('refuses JSON, as text or bytes, over the largest payload any process may have written', () => {
    const json = `"${'x'.repeat(MAX_PAYLOAD_BYTES - 2)}"`;
    expect(storedPayloadJson(json, 'apart')).toBe(json);
    const over = `${json} `;
    expect(() => storedPayloadJson(over, 'apart')).toThrow(
      `payload refused: ${MAX_PAYLOAD_BYTES + 1} bytes of JSON, over the ${MAX_PAYLOAD_BYTES} any payload may have`,
    );
    expect(() => storedPayloadJson(Buffer.from(over), 'row')).toThrow(PayloadRefusedError);
    // Counted in UTF-8 bytes, not characters.
    const wide = `"${'é'.repeat(MAX_PAYLOAD_BYTES / 2)}"`;
    expect(() => storedPayloadJson(wide, 'row')).toThrow(PayloadRefusedError);
  });
});
