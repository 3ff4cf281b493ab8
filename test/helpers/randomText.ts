/**
 * Text of `length` printable ASCII characters from a fixed seed, none that JSON escapes: a payload
 * of a known size that does not pack (src/model/storedPayload.ts keeps it as JSON), for tests of
 * where a kilobyte payload is stored. A repeated character packs to a few dozen bytes.
 */
export function randomText(length: number, seed = 1): string {
  let state = seed >>> 0;
  const chars: string[] = [];
  for (let i = 0; i < length; i++) {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    // 93 characters from '#' (35) to '~' (126) but for the backslash (92), and '!' (33): no '"'.
    const code = 33 + ((state >>> 8) % 93);
    chars.push(String.fromCharCode(code === 92 || code === 34 ? 33 : code));
  }
  return chars.join('');
}
