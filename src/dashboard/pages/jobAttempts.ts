import type { JobInfo } from '../../jobControl/getJob.ts';
import type { JobLogLine } from '../../model/jobLogLine.ts';
import { time, when } from '../format.ts';
import { html, type SafeHtml } from '../html.ts';

/** Most log lines, and bytes of them, a job page shows. */
const SHOWN_LOG_LINES = 500;
const SHOWN_LOG_BYTES = 64 * 1024;

/**
 * A job page's record of its attempts: the errors of its latest failed attempts (newest first,
 * each stack folded) and the lines its handler kept with ctx.log (oldest first, their fields
 * through the page's payload mask; the newest that fit a page, the rest downloadable), with the count
 * of lines dropped past the caps.
 */
export function jobAttempts(job: JobInfo, mask: (value: unknown) => unknown, logsHref: string): SafeHtml {
  return html`
<h2>Attempt errors</h2>
${
  job.errors.length === 0
    ? html`<p class="empty" data-field="errors">No failed attempt kept.</p>`
    : html`<table class="jobs" data-field="errors">
<thead><tr><th>attempt</th><th>failed</th><th>worker</th><th>code</th><th>message</th></tr></thead>
<tbody>${job.errors.map(
        (e) => html`<tr data-attempt="${e.attempt}">
<td>${e.attempt}</td><td>${when(e.failedAt)}</td><td class="mono">${e.workerId ?? '—'}</td><td class="mono">${e.code ?? '—'}</td>
<td>${e.message}${e.stack ? html`<details><summary>stack</summary><pre class="error">${e.stack}</pre></details>` : ''}</td>
</tr>`,
      )}</tbody></table>`
}
<h2>Log</h2>
${shownLogs(job, mask, logsHref)}`;
}

/**
 * The newest log lines that fit SHOWN_LOG_LINES and SHOWN_LOG_BYTES, oldest first: the options'
 * maxima let a job keep far more (keptAttempts × maxLogLines × maxLogBytes) than a page should
 * carry. The rest are a download away.
 */
function shownLogs(job: JobInfo, mask: (value: unknown) => unknown, logsHref: string): SafeHtml {
  if (job.logs.length === 0 && job.logsDropped === 0)
    return html`<p class="empty" data-field="logs">No lines logged (ctx.log).</p>`;
  const lines: string[] = [];
  let bytes = 0;
  for (let i = job.logs.length - 1; i >= 0 && lines.length < SHOWN_LOG_LINES; i--) {
    const l = job.logs[i] as JobLogLine;
    const line = `${time(l.at)}  #${l.attempt}  ${l.message}${l.fields === undefined ? '' : `  ${JSON.stringify(mask(l.fields))}`}\n`;
    bytes += Buffer.byteLength(line);
    if (bytes > SHOWN_LOG_BYTES && lines.length > 0) break;
    lines.push(bytes > SHOWN_LOG_BYTES ? `${line.slice(0, SHOWN_LOG_BYTES)}…\n` : line);
  }
  const hidden = job.logs.length - lines.length;
  const dropped =
    job.logsDropped > 0 ? `… ${job.logsDropped} more line(s) dropped (over maxLogLines / maxLogBytes)` : '';
  return html`${hidden > 0 ? html`<p class="hint" data-field="logs-hidden">The newest ${lines.length} of ${job.logs.length} lines kept; <a href="${logsHref}" download data-download="logs">download all of them</a> (JSON).</p>` : ''}<pre data-field="logs">${lines.reverse()}${dropped}</pre>`;
}
