import type { BatchStatus } from '../../batches/getBatch.ts';
import type { JobSummary } from '../../jobControl/listJobs.ts';
import { count, when } from '../format.ts';
import { html, type SafeHtml } from '../html.ts';
import type { PageContext } from '../PageContext.ts';

/** Jobs listed per way of ending: the first this many, then a link to all of them. */
const SHOWN = 20;

/**
 * Which of a batch's jobs died and which were cancelled — what its counts cannot say, and what a
 * finished workflow's graph no longer shows (a job leaves the graph when it finishes). Each is a
 * page of sluice.jobs.list by batch and state: dead jobs by the dead table's batch index, cancelled
 * ones from the history since the batch was made, a bounded read that may stop short (the link
 * then reads on).
 */
export async function batchEnded(ctx: PageContext, batch: BatchStatus): Promise<SafeHtml> {
  const states = (['dead', 'cancelled'] as const).filter((s) => batch[s] > 0);
  if (states.length === 0) return html``;
  const lists = await Promise.all(
    states.map((state) => ctx.sluice.jobs.list({ batchId: batch.id, state }, { limit: SHOWN })),
  );
  return html`<h2>How its jobs ended</h2>
${states.map((state, i) => {
  const { jobs, next } = lists[i] as { jobs: JobSummary[]; next: string | null };
  const all = html`<a href="${ctx.href('/jobs', { batch: batch.id, state })}">${next === null ? 'as a list' : 'all of them'}</a>`;
  // Fewer listed than counted: the first SHOWN, or what the bounded read of the history found.
  const shown =
    jobs.length >= batch[state]
      ? ''
      : jobs.length === SHOWN
        ? html`, the first ${count(SHOWN)} below`
        : html`, ${count(jobs.length)} of them found by a bounded read, below`;
  return html`<p data-ended="${state}"><strong>${state === 'dead' ? 'Dead' : 'Cancelled'}: ${count(batch[state])}</strong>${shown} (${all})</p>
<ul class="ended">${jobs.map(
    (j) =>
      html`<li data-job-id="${j.id}"><a href="${ctx.href(`/jobs/${j.id}`)}">${j.id}</a> ${j.name} <span class="hint">${j.queue}, ${when(j.finishedAt)}</span>${j.error ? html` <span class="error">${j.error}</span>` : ''}</li>`,
  )}</ul>`;
})}`;
}
