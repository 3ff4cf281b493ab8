import { describe, expect, it } from 'vitest';
import {
  PACK_FROM_CHARS,
  PACKED_PREFIX,
  packPayload,
  storedPayloadJson,
  storedPayloadOrAsIs,
} from '../../src/model/packedPayload.ts';
import { randomText } from '../helpers/randomText.ts';

const json = (value: unknown) => JSON.stringify(value);

describe('packPayload', () => {
  it('keeps JSON up to PACK_FROM_CHARS as it is, however well it would pack', () => {
    const text = json({ pad: 'x'.repeat(PACK_FROM_CHARS - 10) });
    expect(text.length).toBe(PACK_FROM_CHARS);
    expect(packPayload(text)).toBe(text);
  });

  it('packs longer JSON that shrinks by a quarter, and reads it back exactly, as text and as bytes', () => {
    const text = json({ pad: 'x'.repeat(PACK_FROM_CHARS), emoji: '😀 中文 ä', quote: '"\\' });
    const packed = packPayload(text);
    expect(packed.startsWith(PACKED_PREFIX)).toBe(true);
    expect(packed.length).toBeLessThan(text.length / 4);
    expect(storedPayloadJson(packed)).toBe(text);
    expect(storedPayloadJson(Buffer.from(packed, 'utf8'))).toBe(text);
  });

  it('keeps JSON that does not shrink by a quarter as it is', () => {
    const text = json({ random: randomText(16_000) });
    expect(packPayload(text)).toBe(text);
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
