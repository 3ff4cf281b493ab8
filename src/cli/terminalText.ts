/**
 * Text from the database (keys, names, errors, log lines, group and debounce keys) reaches a
 * terminal through the CLI's human-readable output. A control character there is an instruction
 * to the terminal, not text: ESC starts sequences that clear the screen, set the window title or
 * make an OSC 8 link; a C1 CSI does the same on terminals that read 8-bit controls; bidi overrides
 * reorder what the reader sees. Everything below is shown as its escape instead.
 *
 * C0 (U+0000–U+001F, tab and newline included: a value is one line of output), DEL, C1
 * (U+0080–U+009F), the line and paragraph separators, and the bidi embeddings, overrides, isolates
 * and marks (U+061C, U+200E–U+200F, U+202A–U+202E, U+2066–U+2069).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is its purpose
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** The same set less C0, which JSON.stringify already writes as escapes. */
const CONTROLS_JSON_KEEPS = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escapeOf(char: string): string {
  const named = NAMED[char];
  if (named) return named;
  const code = char.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** Pure: `text` as one line a terminal shows as it is, every control character written as its escape. */
export function terminalText(text: string): string {
  return text.replace(CONTROLS, escapeOf);
}

/**
 * Pure: `value` as JSON whose every character a terminal shows as it is: JSON.stringify, with DEL,
 * C1 and the bidi controls (which it leaves raw) written as \u escapes. Still the same JSON.
 */
export function terminalJson(value: unknown): string {
  return JSON.stringify(value).replace(
    CONTROLS_JSON_KEEPS,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
