import { describe, expect, it } from 'vitest';
import { describeJob } from '../../src/cli/jobsCommand.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

const db = useTestDatabase('workflow_get');

describe('jobs.get in a workflow', () => {
  it('shows parents, children and what a held job waits for; the CLI prints them', async () => {
    const runAt = new Date(Date.UTC(2030, 0, 1));
    const { batchId } = await db.sluice.enqueueBatch([
      { name: 'a', ref: 'a' },
      { name: 'b', ref: 'b', parents: ['a'] },
      { name: 'c', ref: 'c', parents: ['a'] },
      { name: 'd', parents: ['b', { job: 'c', continueOnFailure: true }], runAt },
    ]);
    const ids = Object.fromEntries(
      (await db.sluice.jobs.list({ batchId: batchId as number })).jobs.map((j) => [j.name, j.id]),
    );
    const a = await db.sluice.jobs.get(ids.a as number);
    expect(a?.state).toBe('waiting');
    expect(a?.workflow).toEqual({
      parents: [],
      children: [
        { id: ids.b, continueOnFailure: false },
        { id: ids.c, continueOnFailure: false },
      ],
      held: null,
    });
    const d = await db.sluice.jobs.get(ids.d as number);
    expect(d?.state).toBe('held');
    expect(d?.workflow).toEqual({
      parents: [
        { id: ids.b, outcome: 'pending', continueOnFailure: false },
        { id: ids.c, outcome: 'pending', continueOnFailure: true },
      ],
      children: [],
      held: { reason: 'parents', waitingFor: 2, runAt },
    });
    const printed = describeJob(d as NonNullable<typeof d>);
    expect(printed).toContain(`run at       ${runAt.toISOString()} once released`);
    expect(printed).toContain('waiting for  2 parent(s) to finish');
    expect(printed).toContain(`parents      ${ids.b} pending, ${ids.c} pending`);
    expect((await db.sluice.jobs.list({ batchId: batchId as number, state: 'held' })).jobs.map((j) => j.name)).toEqual([
      'b',
      'c',
      'd',
    ]);
    const plain = await db.sluice.enqueue({ name: 'plain' });
    expect((await db.sluice.jobs.get(plain.id))?.workflow).toBeNull();
  });
});
