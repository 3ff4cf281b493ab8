import type { JobInfo } from '../../jobControl/getJob.ts';
import { time } from '../format.ts';
import { html, type SafeHtml } from '../html.ts';

/**
 * A job page's record of its attempts: the errors of its latest failed attempts (newest first,
 * each stack folded) and the lines its handler kept with ctx.log (oldest first, their fields
 * through the page's payload mask), with the count of lines dropped past the caps.
 */
export function jobAttempts(job: JobInfo, mask: (value: unknown) => unknown): SafeHtml {
  return html`
<h2>Attempt errors</h2>
${
  job.errors.length === 0
    ? html`<p class="empty" data-field="errors">No failed attempt kept.</p>`
    : html`<table class="jobs" data-field="errors">
<thead><tr><th>attempt</th><th>failed</th><th>worker</th><th>code</th><th>message</th></tr></thead>
<tbody>${job.errors.map(
        (e) => html`<tr data-attempt="${e.attempt}">
<td>${e.attempt}</td><td>${time(e.failedAt)}</td><td class="mono">${e.workerId ?? '—'}</td><td class="mono">${e.code ?? '—'}</td>
<td>${e.message}${e.stack ? html`<details><summary>stack</summary><pre class="error">${e.stack}</pre></details>` : ''}</td>
</tr>`,
      )}</tbody></table>`
}
<h2>Log</h2>
${
  job.logs.length === 0 && job.logsDropped === 0
    ? html`<p class="empty" data-field="logs">No lines logged (ctx.log).</p>`
    : html`<pre data-field="logs">${job.logs.map(
        (l) =>
          html`${time(l.at)}  #${l.attempt}  ${l.message}${l.fields === undefined ? '' : `  ${JSON.stringify(mask(l.fields))}`}\n`,
      )}${job.logsDropped > 0 ? `… ${job.logsDropped} more line(s) dropped (over maxLogLines / maxLogBytes)` : ''}</pre>`
}`;
}
