import { DashboardRequestError } from '../../errors.ts';
import { batchProgress } from '../batchProgress.ts';
import { count, when } from '../format.ts';
import { html } from '../html.ts';
import type { Page } from '../PageContext.ts';

/** Batches, newest first (keyset by id): name, progress, size, pending, succeeded, dead, cancelled, finished. */
export const batchesPage: Page = async (ctx) => {
  const beforeText = ctx.query.get('before');
  if (beforeText !== null && !/^\d{1,16}$/.test(beforeText))
    throw new DashboardRequestError(400, 'before', `must be a batch id (got ${JSON.stringify(beforeText)})`);
  const { batches, next } = await ctx.sluice.batches.list({
    before: beforeText === null ? undefined : Number(beforeText),
    limit: 20,
  });
  const body = html`
${
  batches.length === 0
    ? html`<p class="empty">No batches.</p>`
    : html`<table class="batches">
<thead><tr><th>batch</th><th>name</th><th>progress</th><th>size</th><th>pending</th><th>succeeded</th><th>dead</th><th>cancelled</th><th>created</th><th>finished</th></tr></thead>
<tbody>${batches.map(
        (b) => html`<tr data-batch-id="${b.id}">
<td><a href="${ctx.href(`/batches/${b.id}`)}">${b.id}</a></td><td>${b.name ?? ''}</td><td>${batchProgress(b)}</td>
<td class="num">${count(b.size)}</td><td class="num">${count(b.pending)}</td><td class="num">${count(b.succeeded)}</td>
<td class="num ${b.dead > 0 ? 'bad' : ''}">${count(b.dead)}</td><td class="num">${count(b.cancelled)}</td>
<td>${when(b.createdAt)}</td><td>${b.finishedAt ? when(b.finishedAt) : 'not yet'}</td>
</tr>`,
      )}</tbody></table>`
}
${next === null ? '' : html`<p class="paging"><a href="${ctx.href('/batches', { before: next })}">Older batches →</a></p>`}`;
  return { title: 'Batches', section: 'batches', body };
};
