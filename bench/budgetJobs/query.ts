import { defineJob } from 'sluice';

/** The connection budget's job that uses ctx.knex: one short statement (a 10 ms SLEEP) per run. */
export default defineJob({
  name: 'query',
  async handle(_payload, ctx) {
    await ctx.knex.raw('SELECT SLEEP(0.01)');
  },
});
