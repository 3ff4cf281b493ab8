import { describe, expect, it } from 'vitest';
import { ClaimLostError } from '../../src/errors.ts';
import { releaseStaleClaims } from '../../src/maintenance/releaseStaleClaims.ts';
import { ClaimTokens } from '../../src/worker/ClaimTokens.ts';
import { claimRandomHead } from '../../src/worker/claims/claimRandomHead.ts';
import { completeJobs } from '../../src/worker/claims/completeJobs.ts';
import { deadLetterJob } from '../../src/worker/claims/deadLetterJob.ts';
import { extendClaims } from '../../src/worker/claims/extendClaims.ts';
import { releaseClaims } from '../../src/worker/claims/releaseClaims.ts';
import { retryJob } from '../../src/worker/claims/retryJob.ts';
import { countRows, deadRow, jobRow, NO_CLAIM, operationsOf } from '../helpers/factory.ts';
import { fakeClock } from '../helpers/fakeClock.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

const db = useTestDatabase('fencing');

interface Reclaimed {
  id: number;
  oldLock: string;
  newLock: string;
}

/**
 * A job claimed by one claim (oldLock), swept by the sweeper after it stood unchanged for the lock
 * timeout of the sweeper's clock, then claimed again by a new claim (newLock) of the *same* process: the lock ids share
 * `<host>-<pid>~<nonce>` and differ only in the per-claim sequence, the case `host-pid` alone
 * could not fence.
 */
async function sweptAndReclaimed(): Promise<Reclaimed> {
  const { exec, tables } = operationsOf(db);
  const { id } = await db.sluice.enqueue({ name: 'fenced', payload: { v: 1 }, maxRetries: 5 });
  const tokens = new ClaimTokens();
  const oldLock = tokens.next();
  const first = await claimRandomHead(exec, tables, {
    queue: 'default',
    priorities: [0],
    want: 1,
    lockId: oldLock,
    headSize: 10,
  });
  expect(first.map((r) => [Number(r.id), r.lock_id])).toEqual([[id, oldLock]]);

  const clock = fakeClock();
  const sweep = releaseStaleClaims(
    { db: exec, tables },
    { lockTimeoutMs: 60_000, batchSize: 100, jitterMs: 0, clock: clock.now },
  );
  expect(await sweep.runOnce()).toEqual({ claims: 0, deadLettered: 0 });
  clock.advance(60_000);
  expect(await sweep.runOnce()).toEqual({ claims: 1, deadLettered: 0 });
  expect(await jobRow(db, id)).toMatchObject({ lock_id: '', locked_at: NO_CLAIM, retry_times: 1 });

  // Between the sweep and the next claim the job is free: the old claim must not touch it either.
  await expectFenced(id, () => completeJobs(exec, tables, oldLock, [id]));

  const newLock = tokens.next();
  expect(newLock).not.toBe(oldLock);
  expect(newLock.split('.')[0]).toBe(oldLock.split('.')[0]);
  const second = await claimRandomHead(exec, tables, {
    queue: 'default',
    priorities: [0],
    want: 1,
    lockId: newLock,
    headSize: 10,
  });
  expect(second.map((r) => [Number(r.id), r.lock_id, r.retry_times])).toEqual([[id, newLock, 1]]);
  return { id, oldLock, newLock };
}

/** The write throws ClaimLostError and leaves the row, every column, and dead_jobs as they were. */
async function expectFenced(id: number, write: () => Promise<unknown>): Promise<void> {
  const before = await jobRow(db, id);
  const error = await write().then(
    () => new Error('the write succeeded'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ClaimLostError);
  expect(error).toMatchObject({ code: 'SLUICE_CLAIM_LOST', jobIds: [id], lost: 1 });
  expect(await jobRow(db, id)).toEqual(before);
  expect(await countRows(db, 'sluice_dead_jobs')).toBe(0);
}

describe('fencing: a swept claim can no longer write to its job, even from the same process', () => {
  it('complete: the old claim throws ClaimLostError and deletes nothing; the new claim deletes', async () => {
    const { exec, tables } = operationsOf(db);
    const { id, oldLock, newLock } = await sweptAndReclaimed();
    await expectFenced(id, () => completeJobs(exec, tables, oldLock, [id]));
    await completeJobs(exec, tables, newLock, [id]);
    expect(await jobRow(db, id)).toBeUndefined();
  });

  it('complete in a batch: rows still held are deleted, the lost one is reported and kept', async () => {
    const { exec, tables } = operationsOf(db);
    const { id, oldLock, newLock } = await sweptAndReclaimed();
    const { id: other } = await db.sluice.enqueue({ name: 'other' });
    await db.query('UPDATE sluice_jobs SET lock_id = ?, locked_at = NOW(3) WHERE id = ?', [oldLock, other]);
    const error = await completeJobs(exec, tables, oldLock, [other, id]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ClaimLostError);
    expect(error).toMatchObject({ code: 'SLUICE_CLAIM_LOST', lost: 1 });
    expect(await jobRow(db, other)).toBeUndefined();
    expect(await jobRow(db, id)).toMatchObject({ lock_id: newLock });
  });

  it('retry: the old claim throws ClaimLostError and changes nothing; the new claim releases with backoff', async () => {
    const { exec, tables } = operationsOf(db);
    const { id, oldLock, newLock } = await sweptAndReclaimed();
    await expectFenced(id, () => retryJob(exec, tables, { id, lockId: oldLock }, 0, 'late failure of a zombie'));
    await retryJob(exec, tables, { id, lockId: newLock }, 60_000, 'Error: second attempt failed');
    const row = await jobRow(db, id);
    expect(row).toMatchObject({
      lock_id: '',
      locked_at: NO_CLAIM,
      retry_times: 2,
      last_error: 'Error: second attempt failed',
    });
    const [{ ahead }] = (await db.query<{ ahead: number }>(
      'SELECT TIMESTAMPDIFF(SECOND, NOW(3), run_at) AS ahead FROM sluice_jobs WHERE id = ?',
      [id],
    )) as [{ ahead: number }];
    expect(Number(ahead)).toBeGreaterThan(30);
  });

  it('dead-letter: the old claim throws ClaimLostError and moves nothing; the new claim moves the job', async () => {
    const { exec, tables } = operationsOf(db);
    const { id, oldLock, newLock } = await sweptAndReclaimed();
    await expectFenced(id, () =>
      deadLetterJob(exec, tables, { id, lockId: oldLock, retryTimes: 6, maxRetries: 5 }, 'zombie gives up'),
    );
    expect(await deadRow(db, id)).toBeUndefined();
    await deadLetterJob(exec, tables, { id, lockId: newLock, retryTimes: 6, maxRetries: 5 }, 'Error: final');
    expect(await jobRow(db, id)).toBeUndefined();
    expect(await deadRow(db, id)).toMatchObject({
      id,
      name: 'fenced',
      retry_times: 6,
      max_retries: 5,
      last_error: 'Error: final',
    });
  });

  it('extend: the old claim reports its job lost and touches nothing; the new claim extends', async () => {
    const { exec, tables } = operationsOf(db);
    const { id, oldLock, newLock } = await sweptAndReclaimed();
    await db.query('UPDATE sluice_jobs SET locked_at = NOW(3) - INTERVAL 10 MINUTE WHERE id = ?', [id]);
    const before = await jobRow(db, id);
    // extendClaims reports lost claims by returning their ids (the heartbeat aborts those
    // handlers), rather than throwing ClaimLostError.
    expect(await extendClaims(exec, tables, oldLock, [id])).toEqual([id]);
    expect(await jobRow(db, id)).toEqual(before);

    expect(await extendClaims(exec, tables, newLock, [id])).toEqual([]);
    const [{ age }] = (await db.query<{ age: number }>(
      'SELECT TIMESTAMPDIFF(SECOND, locked_at, NOW(3)) AS age FROM sluice_jobs WHERE id = ? AND lock_id = ?',
      [id, newLock],
    )) as [{ age: number }];
    expect(Number(age)).toBeLessThan(60);
  });

  it('extend reports exactly which jobs of a claim were lost', async () => {
    const { exec, tables } = operationsOf(db);
    const { id, oldLock } = await sweptAndReclaimed();
    const { id: kept } = await db.sluice.enqueue({ name: 'kept' });
    await db.query('UPDATE sluice_jobs SET lock_id = ?, locked_at = NOW(3) WHERE id = ?', [oldLock, kept]);
    expect(await extendClaims(exec, tables, oldLock, [kept, id])).toEqual([id]);
  });

  it('release at shutdown: the old claim releases nothing; the new claim frees the job without a retry', async () => {
    const { exec, tables } = operationsOf(db);
    const { id, oldLock, newLock } = await sweptAndReclaimed();
    const before = await jobRow(db, id);
    // releaseClaims returns how many claims it gave back (0 here), rather than throwing.
    expect(await releaseClaims(exec, tables, oldLock, [id])).toBe(0);
    expect(await jobRow(db, id)).toEqual(before);

    expect(await releaseClaims(exec, tables, newLock, [id])).toBe(1);
    expect(await jobRow(db, id)).toMatchObject({ lock_id: '', locked_at: NO_CLAIM, retry_times: 1 });
  });

  it('a completed job cannot be completed, retried or dead-lettered again by its own claim', async () => {
    const { exec, tables } = operationsOf(db);
    const { id, newLock } = await sweptAndReclaimed();
    await completeJobs(exec, tables, newLock, [id]);
    await expect(completeJobs(exec, tables, newLock, [id])).rejects.toMatchObject({ code: 'SLUICE_CLAIM_LOST' });
    await expect(retryJob(exec, tables, { id, lockId: newLock }, 0, 'x')).rejects.toMatchObject({
      code: 'SLUICE_CLAIM_LOST',
    });
    await expect(
      deadLetterJob(exec, tables, { id, lockId: newLock, retryTimes: 2, maxRetries: 5 }, 'x'),
    ).rejects.toMatchObject({
      code: 'SLUICE_CLAIM_LOST',
    });
    expect(await countRows(db, 'sluice_dead_jobs')).toBe(0);
  });
});
