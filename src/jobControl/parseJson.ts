/** Stored JSON, parsed; text that is not JSON (written around sluice) comes back as it is. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
