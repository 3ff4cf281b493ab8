import { DashboardRequestError } from '../../errors.ts';
import { loadHandlers } from '../../worker/loadHandlers.ts';
import type { Action } from './Action.ts';
import { textField } from './Action.ts';

/**
 * "Enqueue now" for a recurring job: one job of its name on its queue, outside the schedule
 * (payload `{ manual: true }` instead of the scheduler's `{ scheduledAt }`, and no slot key, so
 * the next tick still runs).
 */
export const enqueueScheduleAction: Action = {
  name: 'enqueue-schedule',
  destructive: false,
  target: (form) => ({ name: form.get('name') }),
  async run(ctx, form) {
    const name = textField(form, 'name');
    const definitions = ctx.options.jobs === null ? new Map() : await loadHandlers(ctx.options.jobs);
    const definition = definitions.get(name);
    if (!definition?.schedule)
      throw new DashboardRequestError(404, 'name', `no recurring job named ${JSON.stringify(name)}`);
    const { id } = await ctx.sluice.enqueue({ name, queue: definition.queue ?? 'default', payload: { manual: true } });
    return { count: 1, notice: { code: 'schedule-enqueued', id, name } };
  },
};
