import type { Action } from './Action.ts';
import { idField } from './Action.ts';

/** Makes a delayed or retrying job due now (jobs.runNow). */
export const runJobNowAction: Action = {
  name: 'run-job-now',
  destructive: false,
  target: (form) => ({ id: form.get('id') }),
  async run(ctx, form) {
    const id = idField(form);
    const changed = await ctx.sluice.jobs.runNow(id);
    return {
      count: changed,
      notice: { code: changed === 1 ? 'job-due' : 'job-not-moved', id },
    };
  },
};
