import type { Action } from './Action.ts';
import { textField } from './Action.ts';

/** Resumes a paused queue. */
export const resumeQueueAction: Action = {
  name: 'resume-queue',
  destructive: false,
  target: (form) => ({ queue: form.get('queue') }),
  async run(ctx, form) {
    const queue = textField(form, 'queue');
    await ctx.sluice.queues.resume(queue);
    return { count: 1, notice: { code: 'queue-resumed', queue } };
  },
};
