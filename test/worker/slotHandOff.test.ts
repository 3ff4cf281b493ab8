import { describe, expect, it } from 'vitest';
import { defineJob, type Worker } from '../../src/index.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { deferred } from '../helpers/workerHarness.ts';

/**
 * docs/flow-control.md, "Hand-offs": a slot freed by a completion starts the next waiting job at
 * once, on whichever worker waits for it, without waiting for that worker's poll. Both workers poll
 * once a minute here: the second job runs within seconds only if the completion rang its queue.
 */
const db = useTestDatabase('slot_hand_off');

const POLL_ONCE_A_MINUTE = { pollIntervalMs: 60_000, maxPollIntervalMs: 60_000, loadPolicy: { enabled: false } };

const limitClaims = async () =>
  Number((await db.query<{ n: number }>('SELECT COALESCE(SUM(limit_claims), 0) AS n FROM sluice_queues'))[0]?.n);

/**
 * Worker A runs the first job; worker B, started meanwhile, is refused the second by the limit and
 * goes back to its minute-long sleep; A stops once its job ends (B must take the freed slot).
 * Resolves with the second job's run, or rejects when it has not run within 10 s.
 */
async function handOff(enqueue: (tag: string) => Promise<unknown>, waitForRefusal: () => Promise<void>) {
  const firstStarted = deferred();
  const finishFirst = deferred();
  const ran: string[] = [];
  const step = defineJob<{ tag: string }>({
    name: 'step',
    async handle({ tag }) {
      ran.push(tag);
      if (tag === 'first') {
        firstStarted.resolve();
        await finishFirst.promise;
      }
    },
  });
  const workers: Worker[] = [];
  const start = async () => {
    const worker = db.sluice.worker({ queues: ['q'], concurrency: 1, jobs: [step], ...POLL_ONCE_A_MINUTE });
    workers.push(worker);
    await worker.start();
    return worker;
  };
  try {
    const a = await start();
    await enqueue('first');
    await firstStarted.promise;
    await start();
    await enqueue('second');
    await waitForRefusal();
    expect(ran).toEqual(['first']);
    const stopped = a.stop();
    finishFirst.resolve();
    await stopped;
    await waitFor(() => ran.includes('second'), { timeoutMs: 10_000, what: 'the second job to run on worker B' });
  } finally {
    finishFirst.resolve();
    await Promise.all(workers.map((w) => w.stop()));
  }
}

describe('a freed slot starts the next job without a poll', () => {
  it('on a queue capped at 1: the completion rings the worker the cap held back', async () => {
    await db.sluice.queues.setLimits('q', { concurrency: 1 });
    let before = 0;
    await handOff(
      async (tag) => {
        before = await limitClaims();
        return db.sluice.enqueue({ name: 'step', queue: 'q', payload: { tag } });
      },
      // Worker B's limited claim, refused by the cap (A's job holds the one slot).
      () => waitFor(async () => (await limitClaims()) > before, { what: 'a claim refused by the cap' }).then(() => {}),
    );
  });

  it('in a group limited to 1: the completion releases the next job and rings its worker', async () => {
    await handOff(
      (tag) =>
        db.sluice.enqueue({ name: 'step', queue: 'q', group: 'g', groupLimits: { concurrency: 1 }, payload: { tag } }),
      // The second job is held for the group (not claimable): B has nothing to claim until it is released.
      () =>
        waitFor(async () => (await db.query('SELECT 1 FROM sluice_job_holds')).length === 1, {
          what: 'the second job held',
        }).then(() => {}),
    );
  });
});
