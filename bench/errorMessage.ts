/** What an error says, for a progress line or a report's failed row (anything thrown, not only Errors). */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
