import type { JobFilter } from '../jobControl/jobFilter.ts';
import { BULK_MAX, type BulkActionName } from './actions/bulkJobActions.ts';
import { count } from './format.ts';
import { html, type SafeHtml } from './html.ts';
import { filterFields, filterWords } from './jobFilterForm.ts';
import { isNoticeParam } from './notices.ts';
import type { PageContext } from './PageContext.ts';

/** The bulk actions, as their buttons say them, and the question each asks ({n}: how many are ticked). */
const BUTTONS: Record<BulkActionName, { label: string; verb: string; danger: boolean }> = {
  'cancel-jobs': { label: 'Cancel', verb: 'Cancel', danger: true },
  'run-jobs-now': { label: 'Run now', verb: 'Run now', danger: false },
  'retry-jobs': { label: 'Retry', verb: 'Retry', danger: false },
  'purge-jobs': { label: 'Purge', verb: 'Purge for good', danger: true },
};

/** Which actions a listing of a state offers: live jobs are cancelled or run now, finished ones retried or purged. */
function actionsFor(filter: JobFilter): BulkActionName[] {
  switch (filter.state) {
    case 'completed':
    case 'cancelled':
    case 'dead':
      return ['retry-jobs', 'purge-jobs'];
    case 'retrying':
      return ['retry-jobs', 'cancel-jobs'];
    case 'running':
      return ['cancel-jobs'];
    default:
      return ['run-jobs-now', 'cancel-jobs'];
  }
}

/**
 * The bar above a job listing (nothing in read-only mode): act on the ticked jobs (the rows'
 * checkboxes belong to this form) or on every job matching the listing's filter — at most the
 * first BULK_MAX, which the question says (not offered where the rows are not the filter's, as
 * on a search). Every button asks first (dashboard.js fills in how
 * many are ticked); the server refuses an unconfirmed one, checks CSRF and logs it.
 */
export function bulkForm(ctx: PageContext, filter: JobFilter, options: { matching?: boolean } = {}): SafeHtml {
  if (ctx.options.readOnly) return html``;
  const back = ctx.href(ctx.path, Object.fromEntries([...ctx.query].filter(([key]) => !isNoticeParam(key))));
  const words = filterWords(filter);
  const actions = actionsFor(filter);
  const button = (name: BulkActionName, scope: 'selected' | 'matching') => {
    const b = BUTTONS[name];
    const question =
      scope === 'selected'
        ? `${b.verb}: the {n} selected job(s)?`
        : `${b.verb}: every job matching ${words}, up to the first ${count(BULK_MAX)}?`;
    return html`<button formaction="${ctx.href(`/actions/${name}`)}" name="scope" value="${scope}" data-action="${name}" data-scope="${scope}" data-confirm="${question}" class="${b.danger ? 'danger' : ''}">${b.label}${scope === 'matching' ? ' all matching' : ''}</button>`;
  };
  return html`<form id="bulk" class="bulk" method="post" action="${ctx.href(`/actions/${actions[0]}`)}">
<input type="hidden" name="csrf" value="${ctx.csrf}"><input type="hidden" name="return" value="${back}">${Object.entries(
    filterFields(filter),
  ).map(
    ([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`,
  )}<input type="hidden" name="confirmed" value="">
<span class="bulk-selected">Selected: <b class="bulk-count">0</b></span>
${actions.map((name) => button(name, 'selected'))}
${
  options.matching === false
    ? ''
    : html`<span class="bulk-matching">All matching (first ${count(BULK_MAX)}):</span>
${actions.map((name) => button(name, 'matching'))}`
}
</form>`;
}
