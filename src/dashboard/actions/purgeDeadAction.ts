import type { Action } from './Action.ts';
import { idField, optionalField } from './Action.ts';

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

/** Deletes every dead job matching the page's filter (queue, name), in bounded batches. */
export const purgeDeadJobsAction: Action = {
  name: 'purge-dead-jobs',
  destructive: true,
  target: (form) => ({ queue: form.get('queue') || null, name: form.get('name') || null }),
  async run(ctx, form) {
    const filter = { queue: optionalField(form, 'queue'), name: optionalField(form, 'name') };
    const { purged } = await ctx.sluice.deadJobs.purge(filter);
    return { count: purged, notice: { code: 'dead-purged-many', count: purged } };
  },
};
