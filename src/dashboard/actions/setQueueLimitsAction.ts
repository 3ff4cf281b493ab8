import { DashboardRequestError, OptionsError } from '../../errors.ts';
import type { Action } from './Action.ts';
import { textField } from './Action.ts';

/**
 * Sets a queue's cap and rate from the queue page's form: `concurrency`, `rate_limit` and
 * `rate_interval_ms`, each a whole number, or empty to remove that limit (a rate needs both
 * halves); `group_concurrency` and `group_rate_limit` with `group_rate_interval_ms` (every group's
 * default limit and rate, empty: none), `fair` (a checkbox) and `fair_window` (empty: the default).
 * Every field is checked before anything is written. Workers pick the change up without a restart.
 */
export const setQueueLimitsAction: Action = {
  name: 'set-queue-limits',
  destructive: false,
  target: (form) => ({
    queue: form.get('queue'),
    concurrency: form.get('concurrency'),
    rate: `${form.get('rate_limit')}/${form.get('rate_interval_ms')}`,
    groupConcurrency: form.get('group_concurrency'),
    groupRate: `${form.get('group_rate_limit')}/${form.get('group_rate_interval_ms')}`,
  }),
  async run(ctx, form) {
    const queue = textField(form, 'queue');
    const concurrency = wholeOrEmpty(form, 'concurrency');
    const rate = rateOrEmpty(form, 'rate_limit', 'rate_interval_ms');
    const groupConcurrency = wholeOrEmpty(form, 'group_concurrency');
    const groupRate = rateOrEmpty(form, 'group_rate_limit', 'group_rate_interval_ms');
    const fair = form.get('fair') === '1';
    const fairWindow = wholeOrEmpty(form, 'fair_window');
    try {
      await ctx.sluice.queues.setLimits(queue, {
        concurrency,
        rate,
        groupConcurrency,
        groupRate,
        fair,
        ...(fair && fairWindow !== null ? { fairWindow } : {}),
      });
    } catch (error) {
      if (error instanceof OptionsError) throw new DashboardRequestError(400, error.option, error.message);
      throw error;
    }
    return { count: 1, notice: { code: 'queue-limits-set', queue } };
  },
};

/** A rate from its two fields, null when both are empty, or DashboardRequestError when one is missing. */
function rateOrEmpty(
  form: URLSearchParams,
  limitField: string,
  intervalField: string,
): { limit: number; intervalMs: number } | null {
  const limit = wholeOrEmpty(form, limitField);
  const intervalMs = wholeOrEmpty(form, intervalField);
  if (limit === null && intervalMs === null) return null;
  if (limit === null || intervalMs === null)
    throw new DashboardRequestError(400, limitField, `and ${intervalField} go together: give both, or neither`);
  return { limit, intervalMs };
}

/** A whole-number field, null when empty, or DashboardRequestError naming it. */
function wholeOrEmpty(form: URLSearchParams, field: string): number | null {
  const text = (form.get(field) ?? '').trim();
  if (text === '') return null;
  if (!/^\d{1,10}$/.test(text))
    throw new DashboardRequestError(
      400,
      field,
      `must be a whole number, or empty for none (got ${JSON.stringify(text)})`,
    );
  return Number(text);
}
