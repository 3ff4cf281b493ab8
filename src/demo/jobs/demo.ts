import { defineJob } from '../../model/defineJob.ts';
import { SQL_RECORD_RUN } from '../demoRuns.ts';

/**
 * `sluice demo`'s own job, shipped with the package (the demo's workers load this folder, never
 * the app's jobs/): records that it ran — job id, payload number, worker pid — in the demo's own
 * table, which the demo counts to prove every job ran exactly once.
 */
export default defineJob<{ n: number }>({
  name: 'demo',
  maxRetries: 5,
  async handle(payload, ctx) {
    await ctx.knex.raw(SQL_RECORD_RUN, [ctx.job.id, payload.n, process.pid]);
  },
});
