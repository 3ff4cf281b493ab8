import type { Action } from './Action.ts';
import { idField, optionalField } from './Action.ts';

/** Re-drives one dead job (`id`) into the live queue as a new job. */
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

/** Re-drives every dead job matching the page's filter (queue, name), in bounded batches. */
export const redriveDeadJobsAction: Action = {
  name: 'redrive-dead-jobs',
  destructive: true,
  target: (form) => ({ queue: form.get('queue') || null, name: form.get('name') || null }),
  async run(ctx, form) {
    const filter = { queue: optionalField(form, 'queue'), name: optionalField(form, 'name') };
    const { redriven } = await ctx.sluice.deadJobs.redrive(filter);
    return { count: redriven, notice: { code: 'dead-redriven-many', count: redriven } };
  },
};
