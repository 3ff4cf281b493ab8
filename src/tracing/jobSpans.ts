import {
  type Attributes,
  type Link,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { coerceError } from '../errorText.ts';
import { attemptErrorFields, cutUtf8, ERROR_CODE_BYTES } from '../model/attemptError.ts';

/**
 * The spans sluice starts, after OpenTelemetry's messaging conventions: an enqueue or a batch is a
 * PRODUCER span `send <queue>` whose context every job it wrote carries (the jobs' creation
 * context: no "create" span per job, which a 100,000-job batch could not afford); an attempt is a
 * CONSUMER span `process <queue>` from its claim to its recorded outcome, a root of its own trace
 * linked to that creation context (a link, not a parent: an attempt may come hours later, and
 * every retry links to the same enqueue). The handler runs inside its attempt's span. What
 * messaging has no name for is under `messaging.sluice.*`, as the conventions ask.
 */
export const ATTR = {
  system: 'messaging.system',
  operationType: 'messaging.operation.type',
  operationName: 'messaging.operation.name',
  destination: 'messaging.destination.name',
  messageId: 'messaging.message.id',
  messageCount: 'messaging.batch.message_count',
  clientId: 'messaging.client.id',
  errorType: 'error.type',
  jobName: 'messaging.sluice.job.name',
  attempt: 'messaging.sluice.job.attempt',
  delivery: 'messaging.sluice.job.delivery',
  outcome: 'messaging.sluice.job.outcome',
  batchId: 'messaging.sluice.batch.id',
  skipped: 'messaging.sluice.batch.skipped',
  duplicate: 'messaging.sluice.job.duplicate',
} as const;

const SYSTEM = 'sluice';

/**
 * What an attempt came to, as its span's `messaging.sluice.job.outcome`:
 * succeeded (the job is done), retried (failed; due again after its backoff), dead (moved to the
 * dead jobs), dropped (at-most-once and failed: nothing to retry), cancelled, lost (the claim was
 * taken back: another attempt owns the job), released (given back uncounted: a stop, or
 * exactly-once conflicts), unrecorded (the outcome could not be written; the claim expires and
 * the job runs again).
 */
export type AttemptOutcome =
  | 'succeeded'
  | 'retried'
  | 'dead'
  | 'dropped'
  | 'cancelled'
  | 'lost'
  | 'released'
  | 'unrecorded';

/**
 * Runs `write` inside a PRODUCER span (`send <queue>`, or `send` for a batch over several
 * queues): the span is the active context while the jobs are written, so it is the parent of any
 * span the driver makes, and its context is the one the jobs carry. A failure is recorded on the
 * span and thrown on.
 */
export function inSendSpan<T>(
  tracer: Tracer,
  queue: string | undefined,
  attributes: Attributes,
  write: (span: Span) => Promise<T>,
): Promise<T> {
  const options = {
    kind: SpanKind.PRODUCER,
    attributes: {
      [ATTR.system]: SYSTEM,
      [ATTR.operationType]: 'send',
      [ATTR.operationName]: 'send',
      ...(queue === undefined ? {} : { [ATTR.destination]: queue }),
      ...attributes,
    },
  };
  return tracer.startActiveSpan(queue === undefined ? 'send' : `send ${queue}`, options, async (span) => {
    try {
      return await write(span);
    } catch (error) {
      recordError(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/** One claimed job, as its attempt's span names it. */
export interface AttemptOf {
  readonly id: number;
  readonly queue: string;
  readonly name: string;
  /** Failed attempts so far (retry_times). */
  readonly retryTimes: number;
  readonly batchId: number | null;
  /** Its definition's delivery mode; undefined when no handler of that name is loaded. */
  readonly delivery: string | undefined;
}

/** Starts one attempt's CONSUMER span, from `startTime` (its claim), linked to its job's creation context. */
export function startAttemptSpan(
  tracer: Tracer,
  job: AttemptOf,
  workerId: string,
  startTime: number,
  link: Link | undefined,
): Span {
  const attributes: Attributes = {
    [ATTR.system]: SYSTEM,
    [ATTR.operationType]: 'process',
    [ATTR.operationName]: 'process',
    [ATTR.destination]: job.queue,
    [ATTR.messageId]: String(job.id),
    [ATTR.clientId]: workerId,
    [ATTR.jobName]: job.name,
    [ATTR.attempt]: job.retryTimes + 1,
  };
  if (job.delivery !== undefined) attributes[ATTR.delivery] = job.delivery;
  if (job.batchId !== null) attributes[ATTR.batchId] = job.batchId;
  return tracer.startSpan(`process ${job.queue}`, {
    kind: SpanKind.CONSUMER,
    root: true,
    startTime,
    attributes,
    ...(link ? { links: [link] } : {}),
  });
}

/** Sets an attempt's outcome on its span, and its error when it failed. */
export function recordOutcome(span: Span, outcome: AttemptOutcome, error?: unknown): void {
  span.setAttribute(ATTR.outcome, outcome);
  if (error !== undefined) recordError(span, error);
}

/** The context a handler runs in: its attempt's span, on an empty context (no ambient parent). */
export function handlerContextOf(span: Span) {
  return trace.setSpan(ROOT_CONTEXT, span);
}

/**
 * Tracing never fails a job: an error whose fields throw when read is recorded as far as it goes.
 * Its text obeys the bounds of an attempt's stored error (attemptErrorFields): the message in the
 * status and the exception event at most ERROR_MESSAGE_BYTES, the stack ERROR_STACK_BYTES, the
 * type ERROR_CODE_BYTES, whatever the error holds.
 */
function recordError(span: Span, error: unknown): void {
  try {
    const fields = attemptErrorFields(error);
    const type = errorType(coerceError(error));
    span.setAttribute(ATTR.errorType, type);
    span.setStatus({ code: SpanStatusCode.ERROR, message: fields.message });
    span.recordException({
      name: type,
      message: fields.message,
      ...(fields.stack === null ? {} : { stack: fields.stack }),
      ...(fields.code === null ? {} : { code: fields.code }),
    });
  } catch {
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
}

/** A coded error's code (SLUICE_CLAIM_LOST, ER_LOCK_DEADLOCK), else its class name; at most ERROR_CODE_BYTES. */
function errorType(error: Error): string {
  const code = (error as { code?: unknown }).code;
  return cutUtf8(typeof code === 'string' && code !== '' ? code : String(error.name), ERROR_CODE_BYTES, '');
}
