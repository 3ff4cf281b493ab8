import '../exampleDatabase.ts';
// test/testing/examples/performJob.test.ts
import { defineJob, PermanentJobError } from 'sluice';
import { createTestInstall, performJob, type TestInstall } from 'sluice/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';

const resizeImage = defineJob<{ url: string; width: number }>({
  name: 'resize-image',
  async handle({ url, width }, ctx) {
    if (width <= 0) throw new PermanentJobError(`width must be positive (got ${width})`);
    ctx.log('resizing', { url });
    ctx.progress(0.5);
    return { url: `${url}?w=${width}` };
  },
});

let install: TestInstall;
beforeAll(async () => {
  install = await createTestInstall({ url: process.env.MYSQL_URL });
});
afterAll(() => install.destroy());

it('returns what the handler returned, with its log and progress', async () => {
  const run = await performJob(install.sluice, resizeImage, { url: 'https://x.test/a.png', width: 320 });
  expect(run.ok && run.result).toEqual({ url: 'https://x.test/a.png?w=320' });
  expect(run.job?.state).toBe('completed');
  expect(run.job?.logs.map((line) => line.message)).toEqual(['resizing']);
  expect(run.progress).toEqual([0.5]);
});

it('hands back what the handler threw, and the job is dead', async () => {
  const run = await performJob(install.sluice, resizeImage, { url: 'https://x.test/a.png', width: 0 });
  expect(run.ok).toBe(false);
  expect(!run.ok && run.error).toBeInstanceOf(PermanentJobError);
  expect(run.job?.state).toBe('dead');
});
