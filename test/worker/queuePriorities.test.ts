import { describe, expect, it } from 'vitest';
import { fromKnex } from '../../src/db/executor.ts';
import { QueuePriorities } from '../../src/worker/QueuePriorities.ts';
import { fromNow, insertJob, MINUTE } from '../helpers/factory.ts';
import { statementsOf } from '../helpers/statementsOf.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * A worker's set of a queue's free priorities, read before its head scan: every distinct value of
 * its free jobs (due or not, claimed ones left out), in one statement for a queue of one priority
 * or none — the read an idle worker makes when a ring wakes it to a queue it last saw empty.
 */
const db = useTestDatabase('queue_priorities');

describe('QueuePriorities', () => {
  it('reads an empty queue, a queue of one priority and one of three in 1, 1 and 3 statements', async () => {
    const priorities = new QueuePriorities(fromKnex(db.sluice.knex, { readCommitted: true }), db.sluice.tables, 0);
    const read = (queue: string) => statementsOf(db.sluice, () => priorities.refresh(queue));
    expect(await read('empty')).toEqual({ n: 1, value: [] });
    await insertJob(db, { queue: 'one', priority: 3 });
    await insertJob(db, { queue: 'one', priority: 3, runAt: fromNow(MINUTE) });
    expect(await read('one')).toEqual({ n: 1, value: [3] });
    for (const priority of [-5, 0, 9]) await insertJob(db, { queue: 'three', priority });
    await insertJob(db, { queue: 'three', priority: 1, lockId: 'h-1~t.0' });
    expect(await read('three')).toEqual({ n: 3, value: [-5, 0, 9] });
  });
});
