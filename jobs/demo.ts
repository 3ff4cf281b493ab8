import { defineJob } from 'sluice';

/**
 * The demo's job: records that it ran, with the job's number and the worker's pid, in the
 * application's own table. `npm run demo` counts these rows to prove every job ran exactly once.
 */
export default defineJob<{ n: number }>({
  name: 'demo',
  maxRetries: 5,
  async handle(payload, ctx) {
    await ctx.knex.raw('INSERT INTO sluice_demo_runs (job_id, n, pid) VALUES (?, ?, ?)', [
      ctx.job.id,
      payload.n,
      process.pid,
    ]);
  },
});
