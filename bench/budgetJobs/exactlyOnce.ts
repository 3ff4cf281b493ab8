import { defineJob } from 'sluice';

/** The connection budget's exactly-once job: one short statement (a 10 ms SLEEP) in its transaction. */
export default defineJob({
  name: 'exactlyOnce',
  delivery: 'exactly-once',
  async handle(_payload, ctx) {
    await ctx.trx?.raw('SELECT SLEEP(0.01)');
  },
});
