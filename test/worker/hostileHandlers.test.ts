import { describe, expect, it } from 'vitest';
import { defineJob, HandlerTimeoutError } from '../../src/index.ts';
import { jobRow } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { deferred, recordEvents, withWorker } from '../helpers/workerHarness.ts';

const db = useTestDatabase('hostile_handlers');

describe('handlers that throw what cannot be read', () => {
  it.each([
    ['an object with no prototype', () => Object.create(null)],
    [
      'an object whose toString throws',
      () => ({
        toString() {
          throw new Error('no');
        },
      }),
    ],
    [
      'an Error whose stack getter throws',
      () => {
        const error = new Error('broken stack');
        Object.defineProperty(error, 'stack', {
          get() {
            throw new Error('no stack for you');
          },
        });
        return error;
      },
    ],
  ])(
    '%s: the attempt fails and is retried like any other, and the worker reports no error of its own',
    async (_label, thrown) => {
      const bad = defineJob({
        name: 'bad',
        maxRetries: 5,
        backoff: { type: 'fixed', delayMs: 60_000 },
        handle() {
          throw thrown();
        },
      });
      const sluice = db.open();
      const events = recordEvents(sluice);
      const { id } = await sluice.enqueue({ name: 'bad' });
      await withWorker(sluice, [bad], {}, () =>
        waitFor(() => events['job:retried'].length === 1, { what: 'the failed attempt retried' }),
      );
      expect(events['job:failed']).toHaveLength(1);
      expect(events['worker:error']).toEqual([]);
      const row = await jobRow<{ lock_id: string; retry_times: number; last_error: string }>(db, id);
      expect(row).toMatchObject({ lock_id: '', retry_times: 1 });
      expect(row?.last_error.length).toBeGreaterThan(0);
    },
  );
});

describe('handlers that never settle', () => {
  it('count against the concurrency until they settle: 2 slots never run more than 2 handlers at once', async () => {
    let live = 0;
    let mostLive = 0;
    let starts = 0;
    const release = deferred();
    const hang = defineJob({
      name: 'hang',
      timeoutMs: 200,
      maxRetries: 1_000,
      backoff: { type: 'fixed', delayMs: 0 },
      async handle() {
        live++;
        starts++;
        mostLive = Math.max(mostLive, live);
        await release.promise; // ignores its signal
        live--;
      },
    });
    const sluice = db.open();
    const events = recordEvents(sluice);
    await sluice.enqueueBatch([{ name: 'hang' }, { name: 'hang' }, { name: 'hang' }]);
    await withWorker(sluice, [hang], { concurrency: 2, shutdownTimeoutMs: 100 }, async () => {
      // Each timed-out attempt is recorded as failed and its job is due again at once.
      await waitFor(() => events['job:retried'].length >= 2, { what: 'the first attempts timed out' });
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(mostLive).toBe(2);
      expect(starts).toBe(2);
      release.resolve();
      await waitFor(() => starts >= 3, { what: 'slots freed once the handlers settled' });
    });
    expect(events['job:failed'].every((e) => e.error instanceof HandlerTimeoutError)).toBe(true);
    expect(mostLive).toBeLessThanOrEqual(2);
  });

  it('a definition without timeoutMs gets the worker’s jobTimeoutMs', async () => {
    const release = deferred();
    const slow = defineJob({
      name: 'slow',
      backoff: { type: 'fixed', delayMs: 60_000 },
      async handle() {
        await release.promise;
      },
    });
    const sluice = db.open();
    const events = recordEvents(sluice);
    await sluice.enqueue({ name: 'slow' });
    await withWorker(sluice, [slow], { jobTimeoutMs: 300, shutdownTimeoutMs: 100 }, async () => {
      await waitFor(() => events['job:failed'].length === 1, { what: 'the attempt timed out' });
      release.resolve();
    });
    expect(events['job:failed'][0]?.error).toBeInstanceOf(HandlerTimeoutError);
  });
});
