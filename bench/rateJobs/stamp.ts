import { defineJob } from 'sluice';

/**
 * Records when its handler started (epoch ms, this process's clock) and when its job was claimed
 * (the claim's locked_at, DB clock; these jobs end long before a heartbeat moves it) in
 * rate_starts: bench rate counts both per window.
 */
export default defineJob<{ jobsTable: string }>({
  name: 'stamp',
  async handle({ jobsTable }, ctx) {
    const startedMs = performance.timeOrigin + performance.now();
    await ctx.knex.raw(
      `INSERT INTO rate_starts (pid, started_ms, claimed_ms)
       SELECT ?, ?, UNIX_TIMESTAMP(locked_at) * 1000 FROM ?? WHERE id = ?`,
      [process.pid, startedMs, jobsTable, ctx.job.id],
    );
  },
});
