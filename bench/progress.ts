/** Progress lines go to stderr, so stdout carries only the report and its closing JSON line. */
export function progress(line: string): void {
  process.stderr.write(`[bench] ${line}\n`);
}
