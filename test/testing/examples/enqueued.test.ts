import '../exampleDatabase.ts';
// test/testing/examples/enqueued.test.ts
import type { Knex } from 'knex';
import { defineJob, type Sluice } from 'sluice';
import { assertEnqueued, createTestInstall, enqueuedJobs, refuteEnqueued, type TestInstall } from 'sluice/testing';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';

const sendWelcome = defineJob<{ userId: number; locale: string }>({
  name: 'send-welcome',
  queue: 'mail',
  handle: () => undefined,
});

/** The code under test: a sign-up writes the user and enqueues the welcome mail in one transaction. */
async function signUp(sluice: Sluice, trx: Knex.Transaction, email: string): Promise<number> {
  const [userId] = await trx('users').insert({ email });
  await sluice.enqueue(sendWelcome, { userId: userId as number, locale: 'en' }, {}, { trx });
  return userId as number;
}

let install: TestInstall;
beforeAll(async () => {
  install = await createTestInstall({ url: process.env.MYSQL_URL });
  await install.sluice.knex.schema.createTable('users', (t) => {
    t.increments('id');
    t.string('email');
  });
});
afterAll(async () => {
  await install.sluice.knex.schema.dropTable('users');
  await install.destroy();
});
beforeEach(() => install.sluice.jobs.cancel({ queue: 'mail' }));

it('enqueues the welcome mail with the user, inside the transaction', async () => {
  const { sluice } = install;
  await sluice.knex.transaction(async (trx) => {
    const userId = await signUp(sluice, trx, 'ann@example.com');
    // Seen inside the transaction, not yet outside it.
    await assertEnqueued(sluice, { name: 'send-welcome', queue: 'mail', payload: { userId } }, { trx });
    await refuteEnqueued(sluice, { name: 'send-welcome' });
  });
  const [job] = await enqueuedJobs(sluice, { name: 'send-welcome' });
  expect(job?.payload).toMatchObject({ locale: 'en' });
});

it('enqueues nothing when the sign-up rolls back', async () => {
  const { sluice } = install;
  await expect(
    sluice.knex.transaction(async (trx) => {
      await signUp(sluice, trx, 'bob@example.com');
      throw new Error('the payment failed');
    }),
  ).rejects.toThrow('the payment failed');
  await refuteEnqueued(sluice, { name: 'send-welcome' });
});
