import { defineJob } from 'sluice';

/**
 * The soak's latency probe: records when it started, on the database clock, beside when it was
 * enqueued (its created_at, also written on the database clock): its pickup latency.
 */
export default defineJob({
  name: 'probe',
  async handle(_payload, ctx) {
    await ctx.knex.raw('INSERT INTO soak_probes (job_id, created_at, started_at) VALUES (?, ?, NOW(3))', [
      ctx.job.id,
      ctx.job.createdAt,
    ]);
  },
});
