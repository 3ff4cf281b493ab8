import type { Action } from './Action.ts';
import { textField } from './Action.ts';

/** Pauses a queue: no worker claims from it until resumed; running jobs finish. */
export const pauseQueueAction: Action = {
  name: 'pause-queue',
  destructive: false,
  target: (form) => ({ queue: form.get('queue') }),
  async run(ctx, form) {
    const queue = textField(form, 'queue');
    await ctx.sluice.queues.pause(queue);
    return { count: 1, notice: { code: 'queue-paused', queue } };
  },
};
