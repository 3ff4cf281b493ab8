import type { Action } from './Action.ts';
import { idField } from './Action.ts';

/** Deletes one dead job for good. */
export const purgeDeadJobAction: Action = {
  name: 'purge-dead-job',
  destructive: true,
  target: (form) => ({ id: form.get('id') }),
  async run(ctx, form) {
    const id = idField(form);
    const { purged } = await ctx.sluice.deadJobs.purge({ ids: [id] });
    return { count: purged, notice: { code: purged === 1 ? 'dead-purged' : 'dead-gone', id } };
  },
};
