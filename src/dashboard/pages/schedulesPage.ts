import type { Schedule } from '../../scheduler/scheduleRow.ts';
import { actionButton } from '../actionButton.ts';
import { when } from '../format.ts';
import { html, type SafeHtml } from '../html.ts';
import type { Page, PageContext } from '../PageContext.ts';

/** Run-time schedules per page of this page. */
const PAGE_SIZE = 50;

/**
 * Run-time schedules, a page at a time in key order (`?after=KEY`), each with pause / resume /
 * remove and a link to its last job; below them, the recurring jobs of the dashboard's job
 * definitions: next slot, last slot and its job, "enqueue now".
 */
export const schedulesPage: Page = async (ctx) => {
  const after = ctx.query.get('after') ?? '';
  const page = await ctx.sluice.schedules.list({ after, limit: PAGE_SIZE });
  const body = html`
<h2>Run-time schedules</h2>
${runtimeTable(ctx, page.schedules)}
${page.next === null ? '' : html`<p class="more"><a data-next href="${ctx.href('/schedules', { after: page.next })}">Next ${PAGE_SIZE} →</a></p>`}
<h2>Job files</h2>
${await filesTable(ctx)}`;
  return { title: 'Schedules', section: 'schedules', body };
};

function runtimeTable(ctx: PageContext, schedules: readonly Schedule[]): SafeHtml {
  if (schedules.length === 0)
    return html`<p class="empty">No run-time schedule${ctx.query.get('after') ? ' past this key' : ''}: create one with sluice.schedules.upsert() or \`sluice schedules upsert\`.</p>`;
  return html`<table class="schedules runtime">
<thead><tr><th>key</th><th>job</th><th>queue</th><th>schedule</th><th>next run</th><th>runs</th><th>last job</th><th></th></tr></thead>
<tbody>${schedules.map(
    (s) => html`<tr data-runtime-schedule="${s.key}">
<td>${s.key}</td><td>${s.job}</td><td>${s.queue}</td>
<td class="mono">${s.cron === null ? `every ${s.every} ms` : s.cron}${s.tz ? ` (${s.tz})` : ''}</td>
<td>${s.paused ? html`<span class="paused">paused</span>` : s.nextRunAt === null ? 'over' : when(s.nextRunAt)}</td>
<td>${s.runs}</td>
<td>${s.lastJobId === null ? '—' : html`<a href="${ctx.href(`/jobs/${s.lastJobId}`)}">${s.lastJobId}</a>`}</td>
<td>${actionButton(ctx, {
      name: 'schedule-control',
      label: s.paused ? 'Resume' : 'Pause',
      fields: { key: s.key, change: s.paused ? 'resume' : 'pause' },
    })}${actionButton(ctx, {
      name: 'schedule-control',
      label: 'Remove',
      fields: { key: s.key, change: 'remove' },
      confirm: `Remove schedule ${s.key}? Its jobs already enqueued stay.`,
      danger: true,
    })}</td>
</tr>`,
  )}</tbody></table>`;
}

async function filesTable(ctx: PageContext): Promise<SafeHtml> {
  if (ctx.options.jobs === null)
    return html`<p class="empty">No job definitions given: start the dashboard with --jobs DIR (or the jobs option) to see their schedules.</p>`;
  const schedules = await ctx.sluice.schedules.files(ctx.options.jobs);
  if (schedules.length === 0) return html`<p class="empty">No recurring job among the definitions.</p>`;
  return html`<table class="schedules">
<thead><tr><th>job</th><th>queue</th><th>schedule</th><th>time zone</th><th>next slot</th><th>last slot</th><th>last job</th><th></th></tr></thead>
<tbody>${schedules.map(
    (s) => html`<tr data-schedule="${s.name}">
<td>${s.name}</td><td>${s.queue}</td><td class="mono">${s.schedule}</td><td>${s.timezone ?? 'process'}</td>
<td>${when(s.nextSlot)}</td><td>${when(s.lastSlot)}</td>
<td>${s.lastJobId === null ? '—' : html`<a href="${ctx.href(`/jobs/${s.lastJobId}`)}">${s.lastJobId}</a> ${s.lastJobState ?? ''}`}</td>
<td>${actionButton(ctx, { name: 'enqueue-schedule', label: 'Enqueue now', fields: { name: s.name } })}</td>
</tr>`,
  )}</tbody></table>`;
}
