import type { Action } from './Action.ts';
import { idField } from './Action.ts';

/** Retries one dead job (`id`): re-drives it into the live queue as a new job. */
export const redriveDeadJobAction: Action = {
  name: 'redrive-dead-job',
  destructive: false,
  target: (form) => ({ id: form.get('id') }),
  async run(ctx, form) {
    const id = idField(form);
    const { redriven } = await ctx.sluice.deadJobs.redrive({ ids: [id] });
    return {
      count: redriven,
      notice: { code: redriven === 1 ? 'dead-redriven' : 'dead-not-redriven', id },
    };
  },
};
