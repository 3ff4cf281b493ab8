import type { QueueLimitsState } from '../api/queuesApi.ts';
import { count, duration } from './format.ts';
import { html, type SafeHtml } from './html.ts';
import { isNoticeParam } from './notices.ts';
import type { PageContext } from './PageContext.ts';

/**
 * A queue's flow control on its page: the cap and the rate with their current use, what holds its
 * jobs back now, and (unless read-only) a form that changes them, posted with the CSRF token like
 * every action. `state` is null for a queue without limits.
 */
export function limitsForm(ctx: PageContext, queue: string, state: QueueLimitsState | null): SafeHtml {
  const cap = state?.concurrency ?? null;
  const rate = state?.rate ?? null;
  const groupRate = state?.groupRate ?? null;
  const use = html`<p class="limits">${
    cap === null ? html`No concurrency cap.` : html`Cap <b>${cap}</b>: ${count(state?.running ?? 0, true)} running.`
  } ${
    rate === null
      ? html`No rate limit.`
      : html`Rate <b>${rate.limit}</b> per ${duration(rate.intervalMs)}: ${count(state?.rateUsed ?? 0, true)} started this window, which ends in ${duration(state?.windowLeftMs ?? null)}.`
  } ${groupText(state)} ${blockedText(state)}</p>`;
  if (ctx.options.readOnly) return use;
  const back = ctx.href(ctx.path, Object.fromEntries([...ctx.query].filter(([key]) => !isNoticeParam(key))));
  return html`${use}<form class="action limits-form" method="post" action="${ctx.href('/actions/set-queue-limits')}"><input type="hidden" name="csrf" value="${ctx.csrf}"><input type="hidden" name="return" value="${back}"><input type="hidden" name="queue" value="${queue}"><label>Cap <input name="concurrency" inputmode="numeric" size="6" value="${cap === null ? '' : String(cap)}"></label> <label>Rate <input name="rate_limit" inputmode="numeric" size="6" value="${rate === null ? '' : String(rate.limit)}"></label> <label>per ms <input name="rate_interval_ms" inputmode="numeric" size="8" value="${rate === null ? '' : String(rate.intervalMs)}"></label> <label>Per group <input name="group_concurrency" inputmode="numeric" size="6" value="${state?.groupConcurrency == null ? '' : String(state.groupConcurrency)}"></label> <label>Group rate <input name="group_rate_limit" inputmode="numeric" size="6" value="${groupRate === null ? '' : String(groupRate.limit)}"></label> <label>per ms <input name="group_rate_interval_ms" inputmode="numeric" size="8" value="${groupRate === null ? '' : String(groupRate.intervalMs)}"></label> <label><input type="checkbox" name="fair" value="1"${state?.fairWindow == null ? '' : html` checked`}> Fair</label> <label>window <input name="fair_window" inputmode="numeric" size="6" value="${state?.fairWindow == null ? '' : String(state.fairWindow)}"></label> <button data-action="set-queue-limits">Save limits</button> <small>(empty: none)</small></form>`;
}

/** The queue's defaults for its groups, and how many jobs wait for their group rather than for a worker. */
function groupText(state: QueueLimitsState | null): SafeHtml | string {
  const perGroup = state?.groupConcurrency ?? null;
  const window = state?.fairWindow ?? null;
  const groupRate = state?.groupRate ?? null;
  const rateText =
    groupRate === null
      ? ''
      : html`Each group starts at most <b>${groupRate.limit}</b> per ${duration(groupRate.intervalMs)}.`;
  if (perGroup === null && window === null) return rateText;
  return html`${perGroup === null ? '' : html`At most <b>${perGroup}</b> per group.`} ${rateText} ${
    window === null ? '' : html`Fair: each group keeps <b>${window}</b> jobs queued.`
  } ${count(state?.groupHeld ?? 0, (state?.groupHeld ?? 0) < 10_000)} held for their group.`;
}

function blockedText(state: QueueLimitsState | null): SafeHtml | string {
  switch (state?.blocked ?? null) {
    case 'concurrency':
      return html`<b class="paused">At its cap</b>: due jobs wait for a running one to end.`;
    case 'rate':
      return html`<b class="paused">Rate-limited</b>: due jobs wait for the next window.`;
    case 'paused':
      return html`<b class="paused">Paused</b> by a rate-limit signal for ${duration(state?.pausedForMs ?? null)} more.`;
    default:
      return '';
  }
}
