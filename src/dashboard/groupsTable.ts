import type { GroupState } from '../api/queuesApi.ts';
import { duration, when } from './format.ts';
import { html, type SafeHtml } from './html.ts';
import { isNoticeParam } from './notices.ts';
import type { PageContext } from './PageContext.ts';

/** Groups shown per page of a queue's page: one bounded read, whatever the number of groups. */
const GROUPS_PER_PAGE = 50;

/**
 * A queue's groups on its page, one page at a time in key order (`group_after` pages on): each with
 * its concurrency limit and the slots taken (its jobs live and not held), its rate and the starts reserved in the current
 * window, the earliest start of a job enqueued now, and its pause. Marks a queue default apart from
 * a group's own limit. One read of at most GROUPS_PER_PAGE + 1 groups.
 */
export async function groupsTable(ctx: PageContext, queue: string): Promise<SafeHtml> {
  const after = ctx.query.get('group_after') ?? undefined;
  const page = await ctx.sluice.queues.groups(queue, { after, limit: GROUPS_PER_PAGE + 1 });
  const shown = page.slice(0, GROUPS_PER_PAGE);
  if (shown.length === 0)
    return html`<p class="empty groups">${after === undefined ? 'No groups.' : 'No more groups.'}</p>`;
  const last = shown[shown.length - 1]?.group ?? '';
  const query = Object.fromEntries([...ctx.query].filter(([k]) => !isNoticeParam(k)));
  return html`<table class="groups">
<thead><tr><th>group</th><th>slots taken / limit</th><th>starts this window / rate</th><th>next start</th><th>paused until</th></tr></thead>
<tbody>${shown.map(
    (g) => html`<tr data-group="${g.group}">
<td>${g.group}</td>
<td>${g.active} / ${limitText(g)}</td>
<td>${rateText(g)}</td>
<td>${g.nextStartAt === null ? 'now' : when(g.nextStartAt)}</td>
<td>${g.pausedUntil === null ? '' : when(g.pausedUntil)}</td>
</tr>`,
  )}</tbody>
</table>${
    page.length > GROUPS_PER_PAGE
      ? html`<p class="paging"><a href="${ctx.href(ctx.path, { ...query, group_after: last })}">More groups →</a></p>`
      : ''
  }`;
}

/** "3", "2 (queue default)" or "none". */
function limitText(g: GroupState): string {
  if (g.effectiveLimit === null) return 'none';
  return g.concurrency === null ? `${g.effectiveLimit} (queue default)` : String(g.effectiveLimit);
}

/** "4 / 10 per 1 s", "… (queue default)", or "no rate". */
function rateText(g: GroupState): string {
  const rate = g.effectiveRate;
  if (rate === null) return 'no rate';
  return `${g.rateUsed} / ${rate.limit} per ${duration(rate.intervalMs)}${g.rate === null ? ' (queue default)' : ''}`;
}
