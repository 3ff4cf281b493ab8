import type { Action } from './Action.ts';
import { idField } from './Action.ts';

/** Cancels one live job; a running one is stopped by its worker within a heartbeat (jobs.cancel). */
export const cancelJobAction: Action = {
  name: 'cancel-job',
  destructive: true,
  target: (form) => ({ id: form.get('id') }),
  async run(ctx, form) {
    const id = idField(form);
    const { cancelled } = await ctx.sluice.jobs.cancel(id);
    return {
      count: cancelled,
      notice: { code: cancelled === 1 ? 'job-cancelled' : 'job-not-live', id },
    };
  },
};
