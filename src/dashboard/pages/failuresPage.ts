import { count, duration } from '../format.ts';
import { html } from '../html.ts';
import type { Page } from '../PageContext.ts';

/** Dead jobs read and grouped per page view: one statement of this many rows. */
const READ = 2_000;

/**
 * Failures grouped (deadJobs.groups): the newest dead jobs by queue, job name and the shape of
 * their error, most first — how many, when the newest and oldest died, an example — each with a
 * link to its queue and name's dead jobs and to the example job.
 */
export const failuresPage: Page = async (ctx) => {
  const { groups, read, capped } = await ctx.sluice.deadJobs.groups({ limit: READ });
  const body = html`
<p class="hint">The newest ${count(read)} dead jobs${capped ? html` (the newest ${count(READ)} read; older ones are not counted here)` : ''}, grouped by queue, job name and the shape of their error's first line: ids, numbers and quoted values replaced by &lt;uuid&gt;, &lt;hex&gt;, &lt;n&gt; and &lt;str&gt;.</p>
${
  groups.length === 0
    ? html`<p class="empty">No dead jobs.</p>`
    : html`<table class="failures">
<thead><tr><th>dead jobs</th><th>queue</th><th>name</th><th>error</th><th>newest</th><th>oldest</th><th></th></tr></thead>
<tbody>${groups.map(
        (g) => html`<tr data-failure-count="${g.count}">
<td class="num">${count(g.count)}</td><td>${g.queue}</td><td>${g.name}</td>
<td class="error" title="${g.example}">${g.shape}</td>
<td class="num">${duration(g.newestAgoMs)} ago</td><td class="num">${duration(g.oldestAgoMs)} ago</td>
<td><a href="${ctx.href(`/dead?${new URLSearchParams({ queue: g.queue, name: g.name })}`)}">dead jobs of ${g.queue} · ${g.name}</a> · <a href="${ctx.href(`/jobs/${g.exampleId}`)}">newest (${g.exampleId})</a></td>
</tr>`,
      )}</tbody></table>`
}`;
  return { title: 'Failures', section: 'failures', body };
};
