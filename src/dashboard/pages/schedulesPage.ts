import { actionButton } from '../actionButton.ts';
import { time } from '../format.ts';
import { html } from '../html.ts';
import type { Page } from '../PageContext.ts';

/** Recurring jobs of the dashboard's job definitions: next slot, last slot and its job; "enqueue now". */
export const schedulesPage: Page = async (ctx) => {
  if (ctx.options.jobs === null) {
    return {
      title: 'Schedules',
      section: 'schedules',
      body: html`<p class="empty">No job definitions given: start the dashboard with --jobs DIR (or the jobs option) to see schedules.</p>`,
    };
  }
  const schedules = await ctx.sluice.schedules.files(ctx.options.jobs);
  const body = html`
${
  schedules.length === 0
    ? html`<p class="empty">No recurring job among the definitions.</p>`
    : html`<table class="schedules">
<thead><tr><th>job</th><th>queue</th><th>schedule</th><th>time zone</th><th>next slot</th><th>last slot</th><th>last job</th><th></th></tr></thead>
<tbody>${schedules.map(
        (s) => html`<tr data-schedule="${s.name}">
<td>${s.name}</td><td>${s.queue}</td><td class="mono">${s.schedule}</td><td>${s.timezone ?? 'process'}</td>
<td>${time(s.nextSlot)}</td><td>${time(s.lastSlot)}</td>
<td>${s.lastJobId === null ? '—' : html`<a href="${ctx.href(`/jobs/${s.lastJobId}`)}">${s.lastJobId}</a> ${s.lastJobState ?? ''}`}</td>
<td>${actionButton(ctx, { name: 'enqueue-schedule', label: 'Enqueue now', fields: { name: s.name } })}</td>
</tr>`,
      )}</tbody></table>`
}`;
  return { title: 'Schedules', section: 'schedules', body };
};
