import { actionButton } from '../actionButton.ts';
import { bulkForm } from '../bulkForm.ts';
import { when } from '../format.ts';
import { html } from '../html.ts';
import type { Page } from '../PageContext.ts';
import { nextLink, selectAllCell, selectCell } from './jobTable.ts';

/**
 * Dead jobs, newest first (jobs.list, state dead: ix_queue_failed or ix_failed), filtered by
 * queue and name; retry (re-drive) or purge one, the ticked ones, or the first 1,000 matching the
 * filter (bulkForm).
 */
export const deadJobsPage: Page = async (ctx) => {
  const queue = ctx.query.get('queue')?.trim() || undefined;
  const name = ctx.query.get('name')?.trim() || undefined;
  const list = await ctx.sluice.jobs.list(
    { state: 'dead', queue, name },
    { limit: 50, after: ctx.query.get('after') || undefined },
  );
  const fields = { ...(queue ? { queue } : {}), ...(name ? { name } : {}) };
  const body = html`
<form class="filter" method="get" action="${ctx.href('/dead')}">
<label>queue <input name="queue" value="${queue ?? ''}"></label>
<label>name <input name="name" value="${name ?? ''}"></label>
<button>Filter</button>
</form>
${bulkForm(ctx, { state: 'dead', ...fields })}
${
  list.jobs.length === 0
    ? html`<p class="empty">${list.next === null ? 'No dead jobs.' : 'None found among the index entries this page read; the next page reads on.'}</p>`
    : html`<table class="jobs">
<thead><tr>${ctx.options.readOnly ? '' : selectAllCell}<th>id</th><th>queue</th><th>name</th><th>attempts</th><th>died</th><th>last error</th><th></th></tr></thead>
<tbody>${list.jobs.map(
        (j) => html`<tr data-job-id="${j.id}">
${ctx.options.readOnly ? '' : selectCell(j.id)}<td><a href="${ctx.href(`/jobs/${j.id}`)}">${j.id}</a></td>
<td>${j.queue}</td><td>${j.name}</td><td>${j.retryTimes}</td><td>${when(j.finishedAt)}</td>
<td class="error">${j.error ?? ''}</td>
<td class="row-actions">${actionButton(ctx, { name: 'redrive-dead-job', label: 'Retry', fields: { id: j.id } })}${actionButton(
          ctx,
          {
            name: 'purge-dead-job',
            label: 'Purge',
            fields: { id: j.id },
            danger: true,
            confirm: `Purge dead job ${j.id} for good?`,
          },
        )}</td>
</tr>`,
      )}</tbody></table>`
}
${nextLink(ctx, list.next)}`;
  return { title: 'Dead jobs', section: 'dead', body };
};
