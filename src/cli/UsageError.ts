/**
 * A command line sluice cannot run as given: an unknown command or flag, a malformed or missing
 * value, a missing argument. The CLI prints its message on one line and exits with code 2.
 */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}
