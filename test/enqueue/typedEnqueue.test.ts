import { describe, expect, it } from 'vitest';
import { defineJob, jobOf } from '../../src/index.ts';
import { jobRow } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

const db = useTestDatabase('typed_enqueue');

const sendEmail = defineJob<{ to: string; subject?: string }>({
  name: 'send-email',
  queue: 'mail',
  handle: () => undefined,
});
const resize = defineJob({ name: 'resize', handle: (payload: { width: number }) => payload.width });

/**
 * Enqueue typed against a job definition. The compile-time half of this file is its
 * `@ts-expect-error` lines, which `npm run typecheck` holds to being errors (an unused one is an
 * error itself); the consumer test checks the same from an app that installed the package.
 */
describe('typed enqueue', () => {
  it('enqueue(definition, payload, fields) writes the definition’s name and queue, the payload and the fields', async () => {
    const { id } = await db.sluice.enqueue(sendEmail, { to: 'ada@example.com' }, { priority: 3 });
    const row = await jobRow<{ name: string; queue: string; payload: string; priority: number }>(
      db,
      id,
      'name, queue, payload, priority',
    );
    expect({ ...row, payload: JSON.parse(row?.payload as string) }).toEqual({
      name: 'send-email',
      queue: 'mail',
      payload: { to: 'ada@example.com' },
      priority: 3,
    });
    const other = await db.sluice.enqueue(resize, { width: 640 }, { queue: 'images' });
    expect(await jobRow(db, other.id, 'name, queue')).toEqual({ name: 'resize', queue: 'images' });
  });

  it('jobOf builds typed JobSpecs for enqueueBatch; a JobSpec still enqueues as before', async () => {
    const { count } = await db.sluice.enqueueBatch([
      jobOf(sendEmail, { to: 'a@example.com' }),
      jobOf(resize, { width: 1 }, { delayMs: 1_000 }),
    ]);
    expect(count).toBe(2);
    expect(jobOf(sendEmail, { to: 'b@example.com' }, { priority: 1 })).toEqual({
      name: 'send-email',
      queue: 'mail',
      payload: { to: 'b@example.com' },
      priority: 1,
    });
    const plain = await db.sluice.enqueue({ name: 'anything', payload: { free: 'form' } });
    expect(plain.duplicate).toBe(false);
  });

  it('a payload its handler does not take is a compile error (checked by npm run typecheck)', () => {
    const wrongTypes = () => {
      // @ts-expect-error `to` must be a string
      void db.sluice.enqueue(sendEmail, { to: 42 });
      // @ts-expect-error `to` is missing
      void db.sluice.enqueue(sendEmail, { subject: 'hi' });
      // @ts-expect-error `width` must be a number
      jobOf(resize, { width: '640' });
      // @ts-expect-error unknown field in a payload object literal
      jobOf(resize, { width: 1, height: 2 });
    };
    expect(typeof wrongTypes).toBe('function'); // not run: these calls exist for the type checker
  });
});
