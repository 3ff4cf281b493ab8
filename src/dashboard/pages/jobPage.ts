import { DashboardRequestError } from '../../errors.ts';
import type { JobInfo } from '../../jobControl/getJob.ts';
import { actionButton } from '../actionButton.ts';
import { prettyJson, time } from '../format.ts';
import { html, type SafeHtml } from '../html.ts';
import type { Page, PageContext } from '../PageContext.ts';
import { jobAttempts } from './jobAttempts.ts';

/**
 * One job, wherever it is: its fields, attempts, lock holder, progress, timeline, payload and
 * result (both through the payload mask), last error with its stack, and the actions its state allows.
 */
export const jobPage: Page = async (ctx, [idText]) => {
  if (!idText || !/^\d{1,16}$/.test(idText))
    throw new DashboardRequestError(400, 'job id', `must be a whole number (got ${JSON.stringify(idText)})`);
  const id = Number(idText);
  const job = await ctx.sluice.jobs.get(id);
  if (!job) {
    return {
      title: `Job ${id}`,
      section: 'jobs',
      status: 404,
      body: html`<p class="empty">No job ${id}: never enqueued, or finished and not kept in history.</p>`,
    };
  }
  const mask = (value: unknown) => ctx.options.maskPayload({ id, name: job.name, queue: job.queue, payload: value });
  const lock = job.lock;
  const body = html`
<section class="actions">${actions(ctx, job)}</section>
<dl class="fields">
<dt>state</dt><dd><span class="state state-${job.state}" data-state="${job.state}">${job.state}</span></dd>
<dt>queue</dt><dd><a href="${ctx.href(`/queues/${encodeURIComponent(job.queue)}`)}">${job.queue}</a></dd>
<dt>name</dt><dd>${job.name}</dd>
<dt>priority</dt><dd>${job.priority}</dd>
<dt>attempts</dt><dd>${job.retryTimes} failed${job.maxRetries === null ? ' (limit: its definition’s)' : ` of at most ${job.maxRetries + 1}`}</dd>
<dt>batch</dt><dd>${job.batchId === null ? '—' : html`<a href="${ctx.href('/jobs', { batch: job.batchId })}">${job.batchId}</a>`}</dd>
<dt>idempotency key</dt><dd>${job.idempotencyKey ?? '—'}</dd>
<dt>held by</dt><dd class="mono" data-field="lock">${
    lock
      ? html`${lock.workerId === null ? html`claim ${lock.lockId} (its worker has no registry row)` : html`${lock.workerId} (host ${lock.host}, pid ${lock.pid}); worker heartbeat ${time(lock.heartbeatAt)}`}; claimed or extended ${time(lock.lockedAt)}`
      : '—'
  }</dd>
<dt>progress</dt><dd>${job.progress ? html`<code>${JSON.stringify(job.progress.value)}</code> at ${time(job.progress.at)}` : '—'}</dd>
${job.redrivenAs === null ? '' : html`<dt>re-driven as</dt><dd><a href="${ctx.href(`/jobs/${job.redrivenAs}`)}">${job.redrivenAs}</a></dd>`}
</dl>
<h2>Timeline</h2>
${timeline(job)}
<h2>Payload</h2>
<pre class="json" data-field="payload">${prettyJson(mask(job.payload))}</pre>
<h2>Result</h2>
<pre class="json" data-field="result">${prettyJson(job.result === undefined ? undefined : mask(job.result))}</pre>
<h2>Last error</h2>
<pre class="error" data-field="error">${job.lastError ?? '—'}</pre>
${jobAttempts(job, mask)}`;
  return { title: `Job ${id}`, section: 'jobs', body };
};

function timeline(job: JobInfo): SafeHtml {
  const events: [string, Date | null][] = [
    ['created', job.createdAt],
    [job.state === 'waiting' || job.state === 'delayed' || job.state === 'retrying' ? 'due' : 'was due', job.runAt],
    ['last attempt started', job.startedAt],
    ['claimed or extended', job.lock?.lockedAt ?? null],
    ['progress reported', job.progress?.at ?? null],
    ['last change', job.updatedAt],
    [job.state === 'dead' ? 'died' : job.state, job.finishedAt],
  ];
  const known = events
    .filter((e): e is [string, Date] => e[1] !== null)
    .sort((a, b) => a[1].getTime() - b[1].getTime());
  return html`<ol class="timeline">${known.map(([what, at]) => html`<li><time>${time(at)}</time> ${what}</li>`)}</ol>`;
}

function actions(ctx: PageContext, job: JobInfo): SafeHtml[] {
  const id = job.id;
  const out: SafeHtml[] = [];
  if (job.state === 'waiting' || job.state === 'delayed' || job.state === 'retrying' || job.state === 'running') {
    out.push(
      actionButton(ctx, {
        name: 'cancel-job',
        label: 'Cancel',
        fields: { id },
        danger: true,
        confirm: `Cancel job ${id}${job.state === 'running' ? ' (its worker stops it)' : ''}?`,
      }),
    );
  }
  if (job.state === 'delayed' || job.state === 'retrying')
    out.push(actionButton(ctx, { name: 'run-job-now', label: 'Run now', fields: { id } }));
  if (job.state === 'dead' && job.redrivenAs === null) {
    out.push(actionButton(ctx, { name: 'redrive-dead-job', label: 'Re-drive', fields: { id } }));
    out.push(
      actionButton(ctx, {
        name: 'purge-dead-job',
        label: 'Purge',
        fields: { id },
        danger: true,
        confirm: `Purge dead job ${id} for good?`,
      }),
    );
  }
  return out;
}
