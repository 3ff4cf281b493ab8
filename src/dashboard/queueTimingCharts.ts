import type { Timings } from '../history/timingsPerInterval.ts';
import { count } from './format.ts';
import { html, jsonScript, type SafeHtml } from './html.ts';
import type { PageContext } from './PageContext.ts';

/** A chart's data as dashboard.js draws it: one line per series, oldest bucket first. */
interface ChartData {
  readonly bucketSeconds: number;
  /** The y axis' unit: jobs per bucket, or milliseconds. */
  readonly unit: 'jobs' | 'ms';
  readonly series: readonly { readonly label: string; readonly values: readonly (number | null)[] }[];
}

function chart(id: string, caption: SafeHtml | string, data: ChartData): SafeHtml {
  return html`<figure><figcaption>${caption}</figcaption><div class="chart" data-series="${id}"></div></figure>
${jsonScript(id, data)}`;
}

/**
 * A queue's charts from its history (history.timings: one bounded read): jobs finished per minute
 * by job name, and the p50/p95 run time and wait per minute of its completed jobs, or of the job
 * name chosen by the links above them (`?name=`). `maxRows`: how many history entries the read
 * stopped at, said in the captions when it did.
 */
export function queueTimingCharts(
  ctx: PageContext,
  timings: Timings,
  name: string | null,
  maxRows: number,
): { byName: SafeHtml; latency: SafeHtml } {
  const { bucketSeconds } = timings;
  const capped = timings.capped
    ? ` (of the last ${count(maxRows)} jobs finished in any queue: older minutes undercounted)`
    : '';
  const byName = chart('queue-names-minutes', `Finished per minute by job name, last hour${capped}`, {
    bucketSeconds,
    unit: 'jobs',
    series: timings.byName.map((n) => ({ label: n.name ?? 'other names', values: n.finished })),
  });
  const of = name === null ? 'all job names' : name;
  const quantiles = (label: string, q: Timings['runMs']) => [
    { label: `${label} p50`, values: q.p50 },
    { label: `${label} p95`, values: q.p95 },
  ];
  const choices = [null, ...timings.byName.map((n) => n.name).filter((n): n is string => n !== null)];
  if (name !== null && !choices.includes(name)) choices.push(name);
  const chooser = html`<nav class="tabs" data-field="timing-names">${choices.map((c) => {
    const current = c === name;
    return html`<a href="${ctx.href(ctx.path, { state: ctx.query.get('state'), name: c })}"${current ? html` aria-current="page"` : ''}>${c ?? 'all job names'}</a>`;
  })}</nav>`;
  const latency = html`<h3>Per minute, last hour: ${of}</h3>
${chooser}
<section class="charts">
${chart('queue-run-minutes', `Run time of completed jobs (claim to finish), ms, p50 and p95${capped}`, {
  bucketSeconds,
  unit: 'ms',
  series: quantiles('run', timings.runMs),
})}
${chart('queue-wait-minutes', `Wait (enqueue to claim, delays and retries included), ms, p50 and p95${capped}`, {
  bucketSeconds,
  unit: 'ms',
  series: quantiles('wait', timings.waitMs),
})}
</section>`;
  return { byName, latency };
}
