import { isJobDefinition, JOB_FIELDS, type JobDefinition, type JobFields, jobOf } from '../model/defineJob.ts';
import type { JobSpec } from '../model/job.ts';
import { rejectUnknownKeys } from '../options.ts';
import { ENQUEUE_KEYS, type EnqueueOptions } from './enqueueBatch.ts';

/**
 * `sluice.enqueue`'s two forms, `(job, options)` and `(definition, payload, fields, options)`, as
 * the job and its options, each object checked for keys it does not know: a knex transaction
 * passed where the fields or the options go is refused ("did you mean trx?"), never ignored.
 */
export function enqueueArguments(
  jobOrDefinition: JobSpec | JobDefinition<any>,
  second: unknown,
  fields: JobFields | undefined,
  options: EnqueueOptions | undefined,
): [JobSpec, EnqueueOptions | undefined] {
  if (!isJobDefinition(jobOrDefinition)) {
    rejectUnknownKeys('sluice.enqueue', second, ENQUEUE_KEYS);
    return [jobOrDefinition, second as EnqueueOptions | undefined];
  }
  rejectUnknownKeys('sluice.enqueue(definition, payload, fields)', fields, JOB_FIELDS);
  rejectUnknownKeys('sluice.enqueue', options, ENQUEUE_KEYS);
  return [jobOf(jobOrDefinition, second, fields), options];
}
