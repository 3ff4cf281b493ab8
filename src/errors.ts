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

/**
 * The server refused a batch as too large for one transaction — on a Galera cluster, its write
 * set is over `wsrep_max_ws_rows` or `wsrep_max_ws_size` — and rolled it back: nothing of the
 * batch was written. Not retried (it would fail the same way): enqueue it in smaller batches, or
 * raise the limit. `cause` is the server's error.
 */
export class BatchTooLargeError extends SluiceError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('SLUICE_BATCH_TOO_LARGE', message, options);
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

/**
 * A job's name matches no loaded handler. A worker gives such jobs back at claim, uncounted (see
 * docs/jobs.md), so an attempt meets this only if a handler went missing after the claim.
 */
export class UnknownJobTypeError extends SluiceError {
  constructor(
    readonly jobName: string,
    known: readonly string[],
  ) {
    super(
      'SLUICE_UNKNOWN_JOB_TYPE',
      `no handler for job name "${jobName}" (known: ${known.length ? known.join(', ') : 'none'})`,
    );
  }
}

/** A handler did not finish within its timeoutMs; its signal was aborted. */
export class HandlerTimeoutError extends SluiceError {
  constructor(
    readonly jobName: string,
    readonly timeoutMs: number,
  ) {
    super('SLUICE_HANDLER_TIMEOUT', `handler "${jobName}" did not finish within ${timeoutMs} ms`);
  }
}

/**
 * A job was dead-lettered without running again: its earlier claims expired (the worker died or
 * stalled) until its failed attempts passed maxRetries. `job:dead` carries it as its error.
 */
export class RetriesExhaustedError extends SluiceError {
  constructor(
    readonly retryTimes: number,
    readonly maxRetries: number,
  ) {
    super(
      'SLUICE_RETRIES_EXHAUSTED',
      `retries exhausted: ${retryTimes} failed attempt(s) > maxRetries ${maxRetries} (its last claim expired: the worker died or stalled)`,
    );
  }
}

/** Thrown by a handler to dead-letter its job at once, without further retries. */
export class PermanentJobError extends SluiceError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('SLUICE_PERMANENT', message, options);
  }
}

/**
 * A stored payload was not read: it is not what sluice writes (packed text longer than a row holds,
 * or packed text stored apart), it would be longer than any payload sluice accepts, or its packed
 * text does not unpack. A worker dead-letters its job at once with this error; jobs.get and the
 * dead-job list show its message (`payloadRefused`) instead of the payload.
 */
export class PayloadRefusedError extends SluiceError {
  constructor(readonly reason: string) {
    super('SLUICE_PAYLOAD_REFUSED', `payload refused: ${reason}`);
  }
}

/** A job definition (from defineJob or a jobs/ file) has the wrong shape. */
export class JobDefinitionError extends SluiceError {
  constructor(where: string, reason: string, options?: { cause?: unknown }) {
    super('SLUICE_JOB_DEFINITION', `${where}: ${reason}`, options);
  }
}

/** No server answered, or it refused us. The message never contains a password. */
export class ConnectionError extends SluiceError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('SLUICE_CONNECTION', message, options);
  }
}

/**
 * An enqueuer leaves some workers' doorbells to polling: they are connected as another database
 * user, whose statements it may neither see nor end (reported once per process, in `doorbell:error`).
 * Nothing failed: those workers start the jobs at their next poll.
 */
export class DoorbellUnreachableError extends SluiceError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('SLUICE_DOORBELL_UNREACHABLE', message, options);
  }
}

/**
 * The job was cancelled (`sluice.jobs.cancel`). A running job's `ctx.signal` is aborted with this
 * reason; `sluice.jobs.waitFor` rejects with it.
 */
export class JobCancelledError extends SluiceError {
  constructor(readonly jobId: number) {
    super('SLUICE_JOB_CANCELLED', `job ${jobId} was cancelled`);
  }
}

/** `sluice.jobs.waitFor`: the job ended in dead_jobs; `lastError` is the error it died of. */
export class JobDeadError extends SluiceError {
  constructor(
    readonly jobId: number,
    readonly lastError: string | null,
  ) {
    super('SLUICE_JOB_DEAD', `job ${jobId} is dead: ${(lastError ?? 'no error recorded').split('\n')[0]}`);
  }
}

/**
 * No job with this id in the live table, the history or the dead jobs: it never existed, or it
 * finished without history (historyRetentionMs 0, or at-most-once) or was pruned.
 */
export class JobNotFoundError extends SluiceError {
  constructor(readonly jobId: number) {
    super('SLUICE_JOB_NOT_FOUND', `no job ${jobId} (never enqueued, or finished and not kept in history)`);
  }
}

/** `sluice.jobs.waitFor` gave up: the job had not finished within timeoutMs. */
export class WaitTimeoutError extends SluiceError {
  constructor(
    readonly jobId: number,
    readonly timeoutMs: number,
  ) {
    super('SLUICE_WAIT_TIMEOUT', `job ${jobId} did not finish within ${timeoutMs} ms`);
  }
}

/**
 * A dashboard request was refused: a malformed value (`where` names the field or path), a
 * missing or wrong CSRF token, a destructive action without its confirmation, an action in
 * read-only mode. `status` is the HTTP status the dashboard answers with.
 */
export class DashboardRequestError extends SluiceError {
  constructor(
    readonly status: number,
    readonly where: string,
    readonly reason: string,
  ) {
    super('SLUICE_DASHBOARD_REQUEST', `${where}: ${reason}`);
  }
}
