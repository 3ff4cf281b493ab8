/** Pure: a LIKE pattern that matches `text` literally (backslash escapes: sluice refuses NO_BACKSLASH_ESCAPES sessions). */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
