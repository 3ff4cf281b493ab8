import { SluiceError } from '../../errors.ts';

/**
 * A throwaway server (`sluice demo`, the test suite) could not be started: no server binary, its
 * data directory could not be initialised, it exited, or it did not answer in time. `logTail` holds
 * the last lines of the server's own error log; the message ends with them too.
 */
export class ServerStartError extends SluiceError {
  constructor(
    message: string,
    readonly logTail: string,
    options?: { cause?: unknown },
  ) {
    super(
      'SLUICE_SERVER_START',
      logTail ? `${message}\n--- server log (last lines) ---\n${logTail}` : message,
      options,
    );
  }
}
