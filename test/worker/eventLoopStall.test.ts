import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { defineJob } from '../../src/index.ts';
import { spawnMaintenance } from '../helpers/spawnSluice.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { recordEvents, withWorker } from '../helpers/workerHarness.ts';

const db = useTestDatabase('event_loop_stall');

describe('a handler that blocks its worker’s event loop', () => {
  it('its worker is declared dead and its claims released; once awake it never runs one job twice at once', async () => {
    // One handler spins for 2.5 s: no heartbeat, no I/O in this process meanwhile. The maintenance
    // process (another process, unaffected) declares the worker dead after 2 missed beats of 200 ms
    // and releases its claims. Beside it an innocent 3 s job that ignores its signal keeps running
    // after its claim was taken back; the worker, awake again, claims that job anew.
    const runs: { start: number; end: number }[] = [];
    const innocent = defineJob({
      name: 'innocent',
      maxRetries: 5,
      backoff: { type: 'fixed', delayMs: 0 },
      async handle() {
        const run = { start: Date.now(), end: Number.POSITIVE_INFINITY };
        runs.push(run);
        await sleep(3_000);
        run.end = Date.now();
      },
    });
    const block = defineJob({
      name: 'block',
      maxRetries: 0,
      async handle() {
        await sleep(300); // the innocent job is running first
        const until = Date.now() + 2_500;
        while (Date.now() < until) {
          // busy: the whole process stalls
        }
      },
    });
    const sluice = db.open();
    const events = recordEvents(sluice);
    await sluice.enqueue({ name: 'innocent' });
    await sluice.enqueue({ name: 'block' });
    const maintenance = spawnMaintenance(db.url, { missedHeartbeats: 2, jitterMs: 0, schedule: '* * * * * *' });
    await maintenance.ready;
    try {
      await withWorker(
        sluice,
        [innocent, block],
        { concurrency: 2, heartbeatIntervalMs: 200, lockTimeoutMs: 30_000, pollIntervalMs: 20 },
        async () => {
          await waitFor(() => events['claim:lost'].length > 0, {
            what: 'the stalled worker finding its claims lost',
            timeoutMs: 20_000,
          });
          await waitFor(() => runs.length >= 2 && runs.every((r) => Number.isFinite(r.end)), {
            what: 'the innocent job run again, to its end',
            timeoutMs: 20_000,
          });
        },
      );
    } finally {
      await maintenance.stop();
    }
    const sorted = [...runs].sort((a, b) => a.start - b.start);
    for (let i = 1; i < sorted.length; i++) {
      expect(sorted[i]!.start, 'a run of the job started before the earlier one ended').toBeGreaterThanOrEqual(
        sorted[i - 1]!.end,
      );
    }
  });
});
