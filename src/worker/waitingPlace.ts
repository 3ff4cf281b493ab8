import type { Job } from '../model/job.ts';

/**
 * Pure: where a claimed job joins the jobs waiting for a slot: after the last one that is of
 * another queue or of no worse priority. A claim's rows come in priority order, so this is the end
 * of the line (a push) unless a later claim took a better job of the same queue than those still
 * waiting at the end; it goes before them, never past another queue's jobs or its own priority.
 */
export function waitingPlace(
  waiting: readonly { readonly job: Pick<Job, 'queue' | 'priority'> }[],
  job: Pick<Job, 'queue' | 'priority'>,
): number {
  let place = waiting.length;
  for (; place > 0; place--) {
    const before = (waiting[place - 1] as (typeof waiting)[number]).job;
    if (before.queue !== job.queue || before.priority <= job.priority) break;
  }
  return place;
}
