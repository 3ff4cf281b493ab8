import { QUEUE_NAME } from '../model/queueName.ts';
import { NAME_PATTERN } from '../model/validateJob.ts';

/**
 * What an action tells the page it returns to, by code: the redirect carries the code and its
 * arguments (`?notice=job-cancelled&notice_id=12`), never text, and the page writes the sentence
 * from this table. A link someone else made can therefore only show one of these sentences, about
 * a number or a name of the right shape: never "Session expired: log in again at https://evil…".
 */
/** What a bulk action did, by word (notice_done), as the sentence says it. */
const DONE = { cancelled: 'cancelled', 'due-now': 'made due now', retried: 'retried', purged: 'purged' } as const;
type Done = keyof typeof DONE;

const NOTICES = {
  'job-cancelled': [['id'], (a) => `Job ${a.id} cancelled.`],
  'job-not-live': [['id'], (a) => `Job ${a.id} was not live any more: nothing cancelled.`],
  'job-due': [['id'], (a) => `Job ${a.id} is due now.`],
  'job-not-moved': [['id'], (a) => `Job ${a.id} was not delayed or retrying: nothing changed.`],
  'schedule-enqueued': [['id', 'name'], (a) => `Job ${a.id} (${a.name}) enqueued.`],
  'schedule-paused': [[], () => 'Schedule paused: it fires nothing until resumed.'],
  'schedule-resumed': [[], () => 'Schedule resumed.'],
  'schedule-removed': [[], () => 'Schedule removed; its jobs already enqueued stay.'],
  'queue-paused': [['queue'], (a) => `Queue ${a.queue} paused: workers claim nothing more from it.`],
  'queue-resumed': [['queue'], (a) => `Queue ${a.queue} resumed.`],
  'queue-limits-set': [['queue'], (a) => `Queue ${a.queue}: limits saved; workers apply them at their next claim.`],
  'dead-purged': [['id'], (a) => `Dead job ${a.id} purged.`],
  'dead-gone': [['id'], (a) => `Dead job ${a.id} was already gone.`],
  'dead-redriven': [['id'], (a) => `Dead job ${a.id} retried: re-driven as a new job.`],
  'dead-not-redriven': [['id'], (a) => `Dead job ${a.id} was already retried or purged.`],
  'jobs-done': [['count', 'total', 'done'], (a) => `${a.count} of ${a.total} job(s) ${DONE[a.done as Done]}.`],
  'jobs-done-more': [
    ['count', 'total', 'done'],
    (a) =>
      `${a.count} of the first ${a.total} matching job(s) ${DONE[a.done as Done]}; more may match: run it again for the next ones.`,
  ],
} as const satisfies Record<string, readonly [readonly (keyof Args)[], (args: Args) => string]>;

export type NoticeCode = keyof typeof NOTICES;

/** A notice's arguments: each checked for its shape when read back from a URL. */
interface Args {
  readonly id?: number | string;
  readonly count?: number | string;
  readonly queue?: string;
  readonly name?: string;
  readonly total?: number | string;
  readonly done?: Done;
}

export type Notice = { readonly code: NoticeCode } & Args;

const ARGS: Record<keyof Args, RegExp> = {
  id: /^\d{1,16}$/,
  count: /^\d{1,16}$/,
  queue: QUEUE_NAME,
  name: NAME_PATTERN,
  total: /^\d{1,16}$/,
  done: /^(cancelled|due-now|retried|purged)$/,
};

/** Whether a query parameter is one a notice writes (pages leave them out of the links they make). */
export function isNoticeParam(key: string): boolean {
  return key === 'notice' || key.startsWith('notice_');
}

/** Pure: the query parameters that carry a notice. */
export function noticeParams(notice: Notice): [string, string][] {
  const out: [string, string][] = [['notice', notice.code]];
  for (const key of Object.keys(ARGS) as (keyof Args)[])
    if (notice[key] !== undefined) out.push([`notice_${key}`, String(notice[key])]);
  return out;
}

/** Pure: the sentence of the notice a query carries, or null when it carries none (or one not of ours). */
export function noticeText(query: URLSearchParams): string | null {
  const code = query.get('notice');
  if (code === null || !Object.hasOwn(NOTICES, code)) return null;
  const [needs, text] = NOTICES[code as NoticeCode];
  const args: Record<string, string> = {};
  for (const key of needs) {
    const value = query.get(`notice_${key}`);
    if (value === null || !ARGS[key].test(value)) return null;
    args[key] = value;
  }
  return text(args as Args);
}
