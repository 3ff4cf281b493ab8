import { listQueueNames } from '../queues/listQueueNames.ts';
import type { TaskDb } from '../task/MaintenanceTask.ts';

/** Queue names read per statement when a task lists the queues holding claims. */
const QUEUE_PAGE = 1_000;

/**
 * Every queue holding a claimed job, where the claim tasks look (ix_head, one range per queue): a
 * page of names per statement, so a pass costs one statement per thousand queues, not one per
 * queue; a queue without a claim costs nothing more.
 */
export async function claimedQueues({ db, tables }: TaskDb): Promise<string[]> {
  const names: string[] = [];
  for (let after: string | null = ''; after !== null; ) {
    const page = await listQueueNames(db, tables, { of: 'claimed', after, limit: QUEUE_PAGE });
    names.push(...page.names.map((q) => q.name));
    after = page.next;
  }
  return names;
}
