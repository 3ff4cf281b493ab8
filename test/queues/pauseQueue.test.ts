import { describe, expect, it } from 'vitest';
import { type ClaimStrategy, defineJob } from '../../src/index.ts';
import { countRows } from '../helpers/factory.ts';
import { jsonLine, runCli } from '../helpers/runCli.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { countHeadScans, deferred, recordEvents, withWorker } from '../helpers/workerHarness.ts';

/**
 * README "Pausing a queue": no worker claims from a paused queue (the check is inside the claim
 * statement, so both strategies honour it), jobs already running finish, resume lets the queue
 * be claimed again; the same through `sluice queue pause|resume|paused`.
 */
const db = useTestDatabase('sem_pause');

/** Jobs of `queue` that are free and were never attempted. */
const untouched = (queue: string) =>
  countRows(db, 'sluice_jobs', "queue = ? AND lock_id = '' AND locked_at = '1970-01-01 00:00:01' AND retry_times = 0", [
    queue,
  ]);

describe('pauseQueue', () => {
  for (const claim of ['random-head', 'skip-locked'] as ClaimStrategy[]) {
    it(`stops claims from that queue while the worker keeps claiming from the others; resume lets them run (${claim})`, async () => {
      const sluice = db.open();
      const events = recordEvents(sluice);
      const ran: string[] = [];
      const job = defineJob<{ tag: string }>({ name: 'job', handle: (payload) => void ran.push(payload.tag) });
      const heldScans = countHeadScans(sluice, 'held');
      await sluice.queues.pause('held');
      await sluice.enqueueBatch(
        Array.from({ length: 3 }, (_, n) => ({ name: 'job', queue: 'held', payload: { tag: `held-${n}` } })),
      );
      await sluice.enqueue({ name: 'job', queue: 'open', payload: { tag: 'open-0' } });

      await withWorker(
        sluice,
        [job],
        { claim, queues: ['held', 'open'], concurrency: 5, pollIntervalMs: 50 },
        async () => {
          // Several rounds over both queues: the open queue's jobs run, the held ones stay free.
          for (let round = 1; round <= 3; round++) {
            await sluice.enqueue({ name: 'job', queue: 'open', payload: { tag: `open-${round}` } });
            await waitFor(() => ran.includes(`open-${round}`), { what: `open-${round}` });
            expect(await untouched('held')).toBe(3);
          }
          await waitFor(() => heldScans() >= 3, { what: 'claim attempts on the paused queue' });
          expect(await untouched('held')).toBe(3);
          expect(ran.filter((t) => t.startsWith('held'))).toEqual([]);

          await sluice.queues.resume('held');
          await waitFor(() => ran.filter((t) => t.startsWith('held')).length === 3, {
            what: 'the held jobs, after resume',
          });
        },
      );
      expect(events['job:claimed'].filter((e) => e.queue === 'held').reduce((n, e) => n + e.count, 0)).toBe(3);
      expect(await countRows(db, 'sluice_jobs')).toBe(0);
    });
  }

  it('lets a job that was already running finish, and claims nothing new from the queue until resumed', async () => {
    const sluice = db.open();
    const events = recordEvents(sluice);
    const started: string[] = [];
    const gate = deferred();
    const job = defineJob<{ tag: string }>({
      name: 'job',
      handle: async (payload) => {
        started.push(payload.tag);
        if (payload.tag === 'running') await gate.promise;
      },
    });
    const headScans = countHeadScans(sluice, 'q');
    const { id } = await sluice.enqueue({ name: 'job', queue: 'q', payload: { tag: 'running' } });
    await withWorker(sluice, [job], { queues: ['q'], concurrency: 5, pollIntervalMs: 50 }, async () => {
      try {
        await waitFor(() => started.length === 1, { what: 'the job running' });
        await sluice.queues.pause('q');
        const { id: waiting } = await sluice.enqueue({ name: 'job', queue: 'q', payload: { tag: 'waiting' } });
        gate.resolve();
        await waitFor(() => events['job:completed'].some((e) => e.jobId === id), { what: 'the running job completed' });
        // The worker keeps trying the queue (its head scans see the waiting job) and claims nothing.
        const scans = headScans();
        await waitFor(() => headScans() >= scans + 3, { what: 'three more claim attempts on the paused queue' });
        expect(await untouched('q')).toBe(1);
        expect(started).toEqual(['running']);
        await sluice.queues.resume('q');
        await waitFor(() => events['job:completed'].some((e) => e.jobId === waiting), {
          what: 'the waiting job, after resume',
        });
      } finally {
        gate.resolve(); // never leave a handler hanging when the test fails
      }
    });
    expect(started).toEqual(['running', 'waiting']);
  });

  it('pausedQueues lists paused queues since when; pausing again keeps the time; resume removes it', async () => {
    expect(await db.sluice.queues.paused()).toEqual([]);
    await db.sluice.queues.pause('b');
    await db.sluice.queues.pause('a');
    const paused = await db.sluice.queues.paused();
    expect(paused).toEqual([
      { queue: 'a', pausedAt: expect.any(Date) },
      { queue: 'b', pausedAt: expect.any(Date) },
    ]);
    await db.query("UPDATE sluice_queues SET paused_at = paused_at - INTERVAL 1 HOUR WHERE queue = 'a'");
    const before = (await db.sluice.queues.paused())[0]?.pausedAt;
    await db.sluice.queues.pause('a');
    expect((await db.sluice.queues.paused())[0]?.pausedAt).toEqual(before);
    await db.sluice.queues.resume('a');
    await db.sluice.queues.resume('never-paused');
    expect((await db.sluice.queues.paused()).map((p) => p.queue)).toEqual(['b']);
  });

  it('pages past 1,000 paused queues: every paused queue is reached, in name order', async () => {
    const names = Array.from({ length: 1_500 }, (_, i) => `t-${String(i + 1).padStart(5, '0')}`);
    await db.query(
      `INSERT INTO sluice_queues (queue, paused_at, updated_at) VALUES ${names.map(() => '(?, NOW(3), NOW(3))').join(', ')}`,
      names,
    );
    const first = await db.sluice.queues.paused();
    expect(first).toHaveLength(1_000);
    const rest = await db.sluice.queues.paused({ after: first[999]?.queue });
    expect(rest.map((p) => p.queue)).toEqual(
      Array.from({ length: 500 }, (_, i) => `t-${String(1001 + i).padStart(5, '0')}`),
    );
    expect(await db.sluice.queues.paused({ after: rest[499]?.queue })).toEqual([]);
    const cli = await runCli(['queue', 'paused', '--url', db.url]);
    expect(cli.code, cli.stderr).toBe(0);
    expect(jsonLine(cli, 'paused').next).toBe('t-01000');
    const last = await runCli(['queue', 'paused', '--after', 't-01000', '--url', db.url]);
    expect(jsonLine(last, 'paused').next).toBeNull();
    expect(jsonLine(last, 'paused').paused).toHaveLength(500);
  });
});

describe('sluice queue (CLI)', () => {
  it('pause, paused and resume act on the database and print JSON; a missing name exits 2', async () => {
    const url = ['--url', db.url];
    const pause = await runCli(['queue', 'pause', 'mail', ...url]);
    expect(pause.code, pause.stderr).toBe(0);
    expect(jsonLine(pause, 'queue')).toEqual({ queue: 'mail', paused: true });
    expect((await db.sluice.queues.paused()).map((p) => p.queue)).toEqual(['mail']);

    const [listed, missing] = await Promise.all([
      runCli(['queue', 'paused', ...url]),
      runCli(['queue', 'pause', ...url]),
    ]);
    expect(listed.code).toBe(0);
    expect(jsonLine<{ paused: { queue: string; pausedAt: string }[] }>(listed, 'paused').paused).toEqual([
      { queue: 'mail', pausedAt: expect.any(String) },
    ]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('pause needs a queue name');

    const resume = await runCli(['queue', 'resume', 'mail', ...url]);
    expect(resume.code, resume.stderr).toBe(0);
    expect(jsonLine(resume, 'queue')).toEqual({ queue: 'mail', paused: false });
    expect(await db.sluice.queues.paused()).toEqual([]);
  });
});
