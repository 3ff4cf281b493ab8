import type { SluiceApi } from '../../api/SluiceApi.ts';
import { DashboardRequestError } from '../../errors.ts';
import { filterFields, jobFilterOf } from '../jobFilterForm.ts';
import type { PageContext } from '../PageContext.ts';
import type { Action } from './Action.ts';

/** The most jobs one click acts on: the ticked ones of a page, or the first this many matching a filter. */
export const BULK_MAX = 1_000;

/** What each bulk action does to a list of job ids, and the word its notice uses. */
const OPS = {
  'cancel-jobs': {
    done: 'cancelled',
    run: async (s: SluiceApi, ids: readonly number[]) => (await s.jobs.cancel(ids)).cancelled,
  },
  'run-jobs-now': { done: 'due-now', run: (s: SluiceApi, ids: readonly number[]) => s.jobs.runNow(ids) },
  'retry-jobs': {
    done: 'retried',
    // Finished ones re-run as new jobs; live ones waiting out a retry backoff are made due now.
    run: async (s: SluiceApi, ids: readonly number[]) =>
      (await s.jobs.retry(ids)).retried + (await s.jobs.retryNow(ids)),
  },
  'purge-jobs': {
    done: 'purged',
    run: async (s: SluiceApi, ids: readonly number[]) => (await s.jobs.purge(ids)).purged,
  },
} as const;

export type BulkActionName = keyof typeof OPS;

/**
 * The jobs a bulk action applies to: `scope=selected` (the default), the ids ticked on the page
 * (at most BULK_MAX); `scope=matching`, the first BULK_MAX jobs the form's filter lists (one
 * bounded jobs.list read), and whether more may match past them.
 */
async function jobsOf(ctx: PageContext, form: URLSearchParams): Promise<{ ids: number[]; more: boolean }> {
  if (form.get('scope') === 'matching') {
    const list = await ctx.sluice.jobs.list(jobFilterOf(form), { limit: BULK_MAX });
    return { ids: list.jobs.map((j) => j.id), more: list.next !== null };
  }
  const texts = form.getAll('id');
  if (texts.length === 0) throw new DashboardRequestError(400, 'id', 'is required: select at least one job');
  if (texts.length > BULK_MAX)
    throw new DashboardRequestError(400, 'id', `takes at most ${BULK_MAX} jobs at once (got ${texts.length})`);
  const ids = texts.map((text) => {
    const n = Number(text);
    if (!/^\d{1,16}$/.test(text) || !Number.isSafeInteger(n) || n < 1)
      throw new DashboardRequestError(400, 'id', `must be job ids (got ${JSON.stringify(text)})`);
    return n;
  });
  return { ids, more: false };
}

function bulkAction(name: BulkActionName): Action {
  const op = OPS[name];
  return {
    name,
    destructive: true,
    target: (form) =>
      form.get('scope') === 'matching'
        ? { scope: 'matching', filter: filterFields(jobFilterOf(form)) }
        : { scope: 'selected', ids: form.getAll('id').slice(0, 20), selected: form.getAll('id').length },
    async run(ctx, form) {
      const { ids, more } = await jobsOf(ctx, form);
      const count = ids.length === 0 ? 0 : await op.run(ctx.sluice, ids);
      return {
        count,
        notice: { code: more ? 'jobs-done-more' : 'jobs-done', count, total: ids.length, done: op.done },
      };
    },
  };
}

/** Cancel, run now, retry, purge: each for the ticked jobs or the first BULK_MAX matching the filter, confirmed. */
export const bulkJobActions: readonly Action[] = (Object.keys(OPS) as BulkActionName[]).map(bulkAction);
