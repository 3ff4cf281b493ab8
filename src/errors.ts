/**
 * sluice's errors: few, named, each with a stable `code`, and carrying their `cause`.
 * Callers branch on `code` (or `instanceof`), never on message text.
 */
export class SluiceError extends Error {
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/**
 * A job handed to enqueue/enqueueBatch is invalid. Nothing of its batch was written. `index` is
 * the job's position in the batch, or -1 for the batch as a whole (its options, its size).
 */
export class JobValidationError extends SluiceError {
  constructor(
    readonly index: number,
    readonly field: string,
    readonly reason: string,
  ) {
    super('SLUICE_JOB_INVALID', `${index >= 0 ? `job ${index}` : 'batch'}: ${field} ${reason}`);
  }
}

/** Options passed to createSluice/worker/maintenance are invalid. */
export class OptionsError extends SluiceError {
  constructor(
    readonly option: string,
    reason: string,
  ) {
    super('SLUICE_OPTIONS_INVALID', `option ${option} ${reason}`);
  }
}

/**
 * A write to a claimed job matched no row: the claim was swept (and maybe re-claimed by another
 * worker) or the job is gone. The write changed nothing.
 */
export class ClaimLostError extends SluiceError {
  constructor(
    readonly operation: string,
    readonly lockId: string,
    readonly jobIds: readonly number[],
    readonly lost: number,
  ) {
    super(
      'SLUICE_CLAIM_LOST',
      `${operation}: ${lost} of ${jobIds.length} job(s) no longer held by claim ${lockId} ` +
        `(ids ${jobIds.slice(0, 10).join(', ')}${jobIds.length > 10 ? ', …' : ''}); nothing was written for them`,
    );
  }
}

/** The database carries migrations this build does not know (refuse to run against it), or one cannot be applied to what the tables hold. */
export class SchemaVersionError extends SluiceError {
  constructor(message: string) {
    super('SLUICE_SCHEMA_VERSION', message);
  }
}

/** A job's name matches no loaded handler. The job fails through the normal retry path. */
export class UnknownJobTypeError extends SluiceError {
  constructor(readonly jobName: string, known: readonly string[]) {
    super(
      'SLUICE_UNKNOWN_JOB_TYPE',
      `no handler for job name "${jobName}" (known: ${known.length ? known.join(', ') : 'none'})`,
    );
  }
}

/** A handler did not finish within its timeoutMs; its signal was aborted. */
export class HandlerTimeoutError extends SluiceError {
  constructor(readonly jobName: string, readonly timeoutMs: number) {
    super('SLUICE_HANDLER_TIMEOUT', `handler "${jobName}" did not finish within ${timeoutMs} ms`);
  }
}

/** Thrown by a handler to dead-letter its job at once, without further retries. */
export class PermanentJobError extends SluiceError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('SLUICE_PERMANENT', message, options);
  }
}

/** A job definition (from defineJob or a jobs/ file) has the wrong shape. */
export class JobDefinitionError extends SluiceError {
  constructor(where: string, reason: string) {
    super('SLUICE_JOB_DEFINITION', `${where}: ${reason}`);
  }
}

/** No server answered, or it refused us. The message never contains a password. */
export class ConnectionError extends SluiceError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('SLUICE_CONNECTION', message, options);
  }
}
