import { DashboardRequestError } from '../../errors.ts';
import type { Action } from './Action.ts';
import { textField } from './Action.ts';

const CHANGES = ['pause', 'resume', 'remove'] as const;
type Change = (typeof CHANGES)[number];

/** Pauses, resumes or removes a run-time schedule (remove asks for confirmation on the page). */
export const scheduleControlAction: Action = {
  name: 'schedule-control',
  destructive: false,
  target: (form) => ({ key: form.get('key'), change: form.get('change') }),
  async run(ctx, form) {
    const key = textField(form, 'key');
    const change = textField(form, 'change') as Change;
    if (!CHANGES.includes(change))
      throw new DashboardRequestError(400, 'change', `must be one of ${CHANGES.join(', ')}`);
    const changed = await ctx.sluice.schedules[change](key);
    if (!changed) throw new DashboardRequestError(404, 'key', `no schedule ${JSON.stringify(key)} to ${change}`);
    return { count: 1, notice: { code: `schedule-${change}d` } };
  },
};
