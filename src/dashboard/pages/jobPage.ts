import { DashboardRequestError } from '../../errors.ts';
import type { GroupHold } from '../../groups/readGroupHold.ts';
import type { JobInfo } from '../../jobControl/getJob.ts';
import { loadHandlers } from '../../worker/loadHandlers.ts';
import { WORKER_DEFAULTS } from '../../worker/workerOptions.ts';
import { actionButton } from '../actionButton.ts';
import { when } from '../format.ts';
import { html, type SafeHtml } from '../html.ts';
import { boundedPrettyJson, jsonPieces } from '../jsonPieces.ts';
import type { Page, PageContext, PageResult } from '../PageContext.ts';
import { jobAttempts } from './jobAttempts.ts';
import { jobGraph } from './jobGraph.ts';
import { jobWorkflow } from './jobWorkflow.ts';

/**
 * What the page shows of one value (payload, result, progress, last error): at most this many
 * bytes, and containers at most this deep. The whole value is a download away.
 */
const SHOWN_BYTES = 32 * 1024;
const SHOWN_DEPTH = 20;

/** The values a job page shows through the payload mask, each downloadable whole as JSON. */
const VALUES = ['payload', 'result', 'progress'] as const;
type ValueName = (typeof VALUES)[number];

/**
 * One job, wherever it is: its fields, attempts, lock holder, progress (a bar when it is a
 * fraction), timeline, payload, result and progress (all three through the payload mask, each
 * shown up to SHOWN_BYTES and SHOWN_DEPTH, with a link to the whole value), last error with its
 * stack, and the actions its state allows.
 */
export const jobPage: Page = async (ctx, [idText]) => {
  const id = jobIdOf(idText);
  const job = await ctx.sluice.jobs.get(id);
  if (!job) return notFound(id);
  const values = maskedValues(ctx, job);
  const lock = job.lock;
  const body = html`
<section class="actions">${actions(ctx, job)}</section>
<dl class="fields">
<dt>state</dt><dd><span class="state state-${job.state}" data-state="${job.state}">${job.state}</span></dd>
<dt>queue</dt><dd><a href="${ctx.href(`/queues/${encodeURIComponent(job.queue)}`)}">${job.queue}</a></dd>
<dt>name</dt><dd>${job.name}</dd>
<dt>priority</dt><dd>${job.priority}</dd>
<dt>attempts</dt><dd data-field="attempts">${await attemptsOf(ctx, job)}</dd>
<dt>batch</dt><dd>${job.batchId === null ? '—' : html`<a href="${ctx.href(`/batches/${job.batchId}`)}">${job.batchId}</a>`}</dd>
<dt>idempotency key</dt><dd>${job.idempotencyKey ?? '—'}</dd>
${jobWorkflow(ctx, job)}
<dt>held by</dt><dd class="mono" data-field="lock">${
    lock
      ? html`${lock.workerId === null ? html`claim ${lock.lockId} (its worker has no registry row)` : html`${lock.workerId} (host ${lock.host}, pid ${lock.pid}); worker heartbeat ${when(lock.heartbeatAt)}`}; claimed or extended ${when(lock.lockedAt)}`
      : '—'
  }</dd>
<dt>progress</dt><dd data-field="progress-summary">${job.progress ? html`${progressOf(values.progress)} at ${when(job.progress.at)}` : '—'}</dd>
${job.groupHold === null ? '' : html`<dt>held back</dt><dd data-field="group-hold">${groupHoldText(job.groupHold)}</dd>`}
${job.queueHold === null ? '' : html`<dt>held back</dt><dd data-field="queue-hold">by its queue: ${job.queueHold.reason}${job.queueHold.until ? html` until ${when(job.queueHold.until)}` : ''}</dd>`}
${job.flowHold === null ? '' : html`<dt>start set by</dt><dd data-field="flow-hold">${job.flowHold.reason === 'debounced' ? html`debounce: key ${job.flowHold.debounceKey}, until ${when(job.flowHold.until)}` : html`${job.flowHold.reason === 'group-rate' ? 'rate limited' : 'paused'}: group ${job.flowHold.group}, reserved start ${when(job.flowHold.until)}`}</dd>`}
${job.redrivenAs === null ? '' : html`<dt>retried as</dt><dd><a href="${ctx.href(`/jobs/${job.redrivenAs}`)}">${job.redrivenAs}</a></dd>`}
</dl>
${jobGraph(ctx, job)}
<h2>Timeline</h2>
${timeline(job)}
<h2>Payload</h2>
${job.payloadRefused === null ? shownValue(ctx, id, 'payload', values.payload) : html`<pre class="error" data-field="payload">${job.payloadRefused}</pre>`}
<h2>Result</h2>
${shownValue(ctx, id, 'result', values.result)}
${job.progress && !isFraction(values.progress) ? html`<h2>Progress</h2>\n${shownValue(ctx, id, 'progress', values.progress)}` : ''}
<h2>Last error</h2>
${shownError(job.lastError)}
${jobAttempts(job, maskerOf(ctx, job), ctx.href(`/jobs/${id}/logs.json`))}`;
  return { title: `Job ${id}`, section: 'jobs', body };
};

/**
 * GET /jobs/<id>/<payload|result|progress|logs>.json: the whole value (or every kept log line), through the same mask as the
 * page, as compact JSON written piece by piece (no indentation to blow up, no recursion to
 * overflow), behind the same auth as every page.
 */
export const jobValuePage: Page = async (ctx, [idText, field]) => {
  const id = jobIdOf(idText);
  const job = await ctx.sluice.jobs.get(id);
  if (!job) return notFound(id);
  if (field === 'logs') {
    const mask = maskerOf(ctx, job);
    const logs = job.logs.map((l) => (l.fields === undefined ? l : { ...l, fields: mask(l.fields) }));
    return { download: { filename: `job-${id}-logs.json`, pieces: jsonPieces({ logs, dropped: job.logsDropped }) } };
  }
  const name = field as ValueName;
  if (name === 'payload' && job.payloadRefused !== null)
    throw new DashboardRequestError(404, name, `job ${id}'s stored ${job.payloadRefused}`);
  const value = maskedValues(ctx, job)[name];
  if (value === undefined)
    throw new DashboardRequestError(404, name, `job ${id} has no ${name}${name === 'result' ? ' kept' : ''}`);
  return { download: { filename: `job-${id}-${name}.json`, pieces: jsonPieces(value) } };
};

function jobIdOf(text: string | undefined): number {
  if (!text || !/^\d{1,16}$/.test(text))
    throw new DashboardRequestError(400, 'job id', `must be a whole number (got ${JSON.stringify(text)})`);
  return Number(text);
}

function notFound(id: number): PageResult {
  return {
    title: `Job ${id}`,
    section: 'jobs',
    status: 404,
    body: html`<p class="empty">No job ${id}: never enqueued, or finished and not kept in history.</p>`,
  };
}

/** The payload, result and progress as the page and its downloads show them: through the payload mask (undefined: none). */
/** The payload mask of this job, for any value shown with it (undefined stays undefined). */
function maskerOf(ctx: PageContext, job: JobInfo): (value: unknown) => unknown {
  return (value) =>
    value === undefined
      ? undefined
      : ctx.options.maskPayload({ id: job.id, name: job.name, queue: job.queue, payload: value });
}

function maskedValues(ctx: PageContext, job: JobInfo): Record<ValueName, unknown> {
  const mask = maskerOf(ctx, job);
  return { payload: mask(job.payload), result: mask(job.result), progress: mask(job.progress?.value) };
}

/** A value as bounded pretty JSON, with a link to all of it. */
function shownValue(ctx: PageContext, id: number, name: ValueName, value: unknown): SafeHtml {
  if (value === undefined) return html`<pre class="json" data-field="${name}">—</pre>`;
  const { text, cut } = boundedPrettyJson(value, SHOWN_BYTES, SHOWN_DEPTH);
  const link = html`<a href="${ctx.href(`/jobs/${id}/${name}.json`)}" download data-download="${name}">${cut ? `Download the whole ${name}` : 'Download'} (JSON)</a>`;
  return html`<pre class="json" data-field="${name}">${text}${cut ? '\n…' : ''}</pre>
<p class="hint">${cut ? `Shown up to ${SHOWN_BYTES / 1024} KiB and ${SHOWN_DEPTH} levels deep. ` : ''}${link}</p>`;
}

/** The last error, cut at SHOWN_BYTES (it is a stack trace; the job's API call has all of it). */
function shownError(error: string | null): SafeHtml {
  if (error === null) return html`<pre class="error" data-field="error">—</pre>`;
  const cut = Buffer.byteLength(error) > SHOWN_BYTES;
  const text = cut ? Buffer.from(error).subarray(0, SHOWN_BYTES).toString('utf8') : error;
  return html`<pre class="error" data-field="error">${text}${cut ? '\n…' : ''}</pre>`;
}

/** A progress of 0 to 1: shown as a bar and a percentage, and only so. */
function isFraction(value: unknown): value is number {
  return typeof value === 'number' && value >= 0 && value <= 1;
}

/** Progress as a bar when it is a fraction (0 to 1), else as bounded JSON. */
function progressOf(value: unknown): SafeHtml {
  if (isFraction(value)) {
    const percent = `${Math.round(value * 100)}%`;
    return html`<progress value="${value}" max="1" data-progress="${value}">${percent}</progress> ${percent}`;
  }
  const { text, cut } = boundedPrettyJson(value, 200, 3);
  return html`<code>${text.replace(/\s*\n\s*/g, ' ')}${cut ? ' …' : ''}</code>`;
}

/**
 * Failed attempts and the most a job gets: its own limit, else its definition's when the
 * dashboard was given the job files, else a worker's default (WORKER_DEFAULTS.maxRetries).
 */
async function attemptsOf(ctx: PageContext, job: JobInfo): Promise<string> {
  if (job.maxRetries !== null) return `${job.retryTimes} failed of at most ${job.maxRetries + 1}`;
  const definition = ctx.options.jobs === null ? undefined : (await loadHandlers(ctx.options.jobs)).get(job.name);
  if (definition?.maxRetries !== undefined)
    return `${job.retryTimes} failed of at most ${definition.maxRetries + 1} (its definition’s retry limit)`;
  const limit = `${job.retryTimes} failed of at most ${WORKER_DEFAULTS.maxRetries + 1} (a worker’s default retry limit)`;
  return definition
    ? limit
    : `${limit}, unless its definition sets maxRetries: start the dashboard with --jobs to read it`;
}

/** Why a job waits for its group: the group, its slots taken and its limit. */
function groupHoldText(hold: GroupHold): string {
  const limit = hold.limit === null ? 'no limit' : `${hold.fair ? 'a fair-share window' : 'a limit'} of ${hold.limit}`;
  return `by its group ${hold.group}: ${hold.active} slot(s) taken, ${limit}; runs from ${hold.runAt.toISOString()} once released`;
}

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
  return html`<ol class="timeline">${known.map(([what, at]) => html`<li>${when(at)} ${what}</li>`)}</ol>`;
}

function actions(ctx: PageContext, job: JobInfo): SafeHtml[] {
  const id = job.id;
  const out: SafeHtml[] = [];
  const live = ['waiting', 'delayed', 'held', 'retrying', 'running'];
  if (live.includes(job.state)) {
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
    out.push(actionButton(ctx, { name: 'redrive-dead-job', label: 'Retry', fields: { id } }));
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
  if ((job.state === 'completed' || job.state === 'cancelled') && job.redrivenAs === null) {
    const confirm = `Retry job ${id}: run it again as a new job?`;
    out.push(actionButton(ctx, { name: 'retry-jobs', label: 'Retry', fields: { id }, confirm }));
  }
  if (job.state === 'completed' || job.state === 'cancelled')
    out.push(
      actionButton(ctx, {
        name: 'purge-jobs',
        label: 'Purge',
        fields: { id },
        danger: true,
        confirm: `Purge job ${id} from the history for good?`,
      }),
    );
  return out;
}
