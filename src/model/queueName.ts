import { OptionsError } from '../errors.ts';

/** Queue names: 1–64 characters that fit a log line, a file name and an index without quoting. */
export const QUEUE_NAME = /^[A-Za-z0-9_.:-]{1,64}$/;

/** Throws OptionsError (naming `option`) unless `queue` is a queue name. */
export function assertQueueName(option: string, queue: unknown): string {
  if (typeof queue !== 'string' || !QUEUE_NAME.test(queue)) {
    throw new OptionsError(
      option,
      `must be a queue name of 1–64 characters of [A-Za-z0-9_.:-] (got ${JSON.stringify(queue)})`,
    );
  }
  return queue;
}
