import { describe, expect, it } from 'vitest';
import { defineJob, OptionsError } from '../src/index.ts';
import { ago, insertJob } from './helpers/factory.ts';
import { useTestDatabase } from './helpers/testDatabase.ts';
import { waitFor } from './helpers/waitFor.ts';
import { recordEvents, withWorker } from './helpers/workerHarness.ts';

const db = useTestDatabase('redact_payload');

/** Keeps only the order id: the card number must not outlive the job. */
const keepOrderId = ({ payload }: { payload: unknown }) => ({ orderId: (payload as { orderId?: number }).orderId });

async function stored(table: 'sluice_job_history' | 'sluice_dead_jobs'): Promise<unknown[]> {
  const rows = await db.query<{ payload: string }>(
    `SELECT payload FROM ${table} ORDER BY ${table === 'sluice_dead_jobs' ? 'id' : 'job_id'}`,
  );
  return rows.map((r) => JSON.parse(r.payload));
}

describe('redactPayload: what history and dead jobs keep of a payload', () => {
  it('the handler sees the whole payload; completed, dead, swept-out and cancelled copies keep only what the hook returns', async () => {
    const sluice = db.open({ redactPayload: keepOrderId });
    const events = recordEvents(sluice);
    const seen: unknown[] = [];
    const charge = defineJob<{ orderId: number; card: string }>({
      name: 'charge',
      handle(payload) {
        seen.push(payload);
      },
    });
    const refuse = defineJob({
      name: 'refuse',
      maxRetries: 0,
      handle() {
        throw new Error('declined');
      },
    });
    await sluice.enqueue({ name: 'charge', payload: { orderId: 1, card: '4242-4242' } });
    await sluice.enqueue({ name: 'refuse', payload: { orderId: 2, card: '4000-0002' } });
    await withWorker(sluice, [charge, refuse], {}, () =>
      waitFor(() => events['job:completed'].length === 1 && events['job:dead'].length === 1, { what: 'both finished' }),
    );
    expect(seen).toEqual([{ orderId: 1, card: '4242-4242' }]);

    // Dead-lettered by the maintenance process: a claim that expired with its retries used up.
    await insertJob(db, {
      lockId: 'h-1~a.1',
      lockedAt: ago(3_600_000),
      retryTimes: 0,
      maxRetries: 0,
      payload: { orderId: 3, card: '5555' },
    });
    const maintenance = sluice.maintenance({ lockTimeoutMs: 1_000, jitterMs: 0 });
    try {
      // The stale claim is watched for its lock timeout on this process's clock before it is released.
      await waitFor(async () => ((await maintenance.runOnce()).tasks.releaseStaleClaims?.deadLettered ?? 0) > 0, {
        what: 'the expired claim dead-lettered',
      });
    } finally {
      await maintenance.stop();
    }
    // Cancelled while waiting.
    const { id } = await sluice.enqueue({ name: 'charge', payload: { orderId: 4, card: '3782' }, delayMs: 60_000 });
    expect(await sluice.jobs.cancel(id)).toEqual({ cancelled: 1 });

    expect(await stored('sluice_job_history')).toEqual([{ orderId: 1 }, { orderId: 4 }]);
    expect(await stored('sluice_dead_jobs')).toEqual([{ orderId: 2 }, { orderId: 3 }]);
    const everything =
      JSON.stringify(await db.query('SELECT * FROM sluice_job_history')) +
      JSON.stringify(await db.query('SELECT * FROM sluice_dead_jobs'));
    expect(everything).not.toMatch(/4242|4000-0002|5555|3782/);
  });

  it('a hook that throws stores a marker, never the payload, and the job still completes', async () => {
    const sluice = db.open({
      redactPayload: () => {
        throw new Error('bug in the hook');
      },
    });
    const events = recordEvents(sluice);
    await sluice.enqueue({ name: 'ok', payload: { secret: 's3cret' } });
    await withWorker(sluice, [defineJob({ name: 'ok', handle() {} })], {}, () =>
      waitFor(() => events['job:completed'].length === 1, { what: 'completed' }),
    );
    expect(await stored('sluice_job_history')).toEqual([{ redacted: expect.stringContaining('hook failed') }]);
  });

  it('a redactPayload that is not a function is refused', () => {
    expect(() => db.open({ redactPayload: 'no' as never })).toThrow(OptionsError);
  });
});
