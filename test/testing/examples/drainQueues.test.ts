import '../exampleDatabase.ts';
// test/testing/examples/drainQueues.test.ts
import { defineJob, jobOf } from 'sluice';
import { createTestInstall, drainQueues, type TestInstall } from 'sluice/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';

const totals: number[] = [];
const addUp = defineJob<{ n: number }>({
  name: 'add-up',
  handle: ({ n }) => n * 2,
});
const report = defineJob<Record<string, never>>({
  name: 'report',
  async handle(_payload, ctx) {
    const parents = await ctx.parents();
    totals.push(parents.reduce((sum, parent) => sum + (parent.result as number), 0));
  },
});

let install: TestInstall;
beforeAll(async () => {
  install = await createTestInstall({ url: process.env.MYSQL_URL });
});
afterAll(() => install.destroy());

it('runs a fan-in until nothing is due, then reports what ran', async () => {
  await install.sluice.enqueueBatch([
    ...[1, 2, 3].map((n) => jobOf(addUp, { n }, { ref: `add-${n}` })),
    jobOf(report, {}, { parents: ['add-1', 'add-2', 'add-3'] }),
  ]);
  const counts = await drainQueues(install.sluice, { jobs: [addUp, report], queues: ['default'] });
  expect(counts).toEqual({ completed: 4, failed: 0, dead: 0, snoozed: 0, cancelled: 0 });
  expect(totals).toEqual([12]);
});
