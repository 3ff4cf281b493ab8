/** URL parameters whose values are secrets, or could be (compared in lower case). */
const SECRET_PARAMS = /pass|pwd|secret|token|key|auth|cred/i;

/**
 * The URL with its password and every parameter that may carry a secret replaced by `***`, for
 * log lines, error messages and pages. An unparseable URL is not echoed at all.
 */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '<unparseable url>';
  }
  if (parsed.password) parsed.password = '***';
  for (const name of [...parsed.searchParams.keys()]) {
    if (SECRET_PARAMS.test(name)) parsed.searchParams.set(name, '***');
  }
  return parsed.toString();
}
