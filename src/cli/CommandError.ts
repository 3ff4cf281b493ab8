/**
 * A command that cannot go on for a reason the user can fix (a file in the way, a folder
 * missing): the CLI prints its message on one line and exits with code 1.
 */
export class CommandError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CommandError';
  }
}
