import { JobDefinitionError } from './errors.ts';
import { NAME_PATTERN } from './enqueue/validateJob.ts';
import type { JobDefinition } from './types.ts';
import { scheduleProblem } from './scheduler/parseSchedule.ts';
import { backoffProblem } from './worker/backoff.ts';

/** Declares a job type. Checks its shape now, so a bad definition fails at load, not at the first job. */
export function defineJob<P = unknown>(definition: JobDefinition<P>): JobDefinition<P> {
  const where = `defineJob(${JSON.stringify(definition?.name)})`;
  if (typeof definition !== 'object' || definition === null) throw new JobDefinitionError('defineJob', 'expects an object');
  if (typeof definition.name !== 'string' || !NAME_PATTERN.test(definition.name)) {
    throw new JobDefinitionError(where, `name must match ${NAME_PATTERN}`);
  }
  if (typeof definition.handle !== 'function') throw new JobDefinitionError(where, 'handle must be a function');
  if (definition.maxRetries !== undefined && !(Number.isInteger(definition.maxRetries) && definition.maxRetries >= 0)) {
    throw new JobDefinitionError(where, 'maxRetries must be a non-negative integer');
  }
  if (definition.timeoutMs !== undefined && !(Number.isFinite(definition.timeoutMs) && definition.timeoutMs > 0)) {
    throw new JobDefinitionError(where, 'timeoutMs must be a positive number');
  }
  if (definition.backoff !== undefined) {
    const problem = backoffProblem(definition.backoff, true);
    if (problem) throw new JobDefinitionError(where, `backoff ${problem}`);
  }
  if (definition.schedule !== undefined || definition.timezone !== undefined) {
    const problem = scheduleProblem(definition.schedule, definition.timezone);
    if (problem) throw new JobDefinitionError(where, problem);
  }
  if (definition.delivery !== undefined && !['at-least-once', 'exactly-once', 'at-most-once'].includes(definition.delivery)) {
    throw new JobDefinitionError(where, `delivery must be 'at-least-once', 'exactly-once' or 'at-most-once' (got ${JSON.stringify(definition.delivery)})`);
  }
  return Object.freeze({ ...definition });
}
