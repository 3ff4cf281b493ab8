import { Writable } from 'node:stream';
import { pino } from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { defineJob, type Maintenance, OptionsError, type Sluice, type SluiceEventMap } from '../../src/index.ts';
import { createFixtureTables } from '../fixtures/fixtureTables.ts';
import { ago, countRows, insertJobs, MINUTE } from '../helpers/factory.ts';
import { fakeClock } from '../helpers/fakeClock.ts';
import { processState } from '../helpers/processState.ts';
import { runCli } from '../helpers/runCli.ts';
import { spawnWorker } from '../helpers/spawnSluice.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { withWorker } from '../helpers/workerHarness.ts';

/**
 * Queue latency promises (checkQueues): the maintenance leader reads every queue's depth once per
 * pass, records it, and holds each promised queue to its promise. A broken promise raises
 * `promise:broken` once over any number of passes (its state is in the queue's row, so also across
 * a change of leader), and `promise:kept` once when the queue is back within it. Passes are run
 * with runOnce(), never waited for; time is moved by backdating run_at on the DB clock.
 */
const db = useTestDatabase('check_queues');

beforeAll(() => createFixtureTables(db));

interface Seen {
  broken: SluiceEventMap['promise:broken'][];
  kept: SluiceEventMap['promise:kept'][];
  /** The log lines about promises, as the one log subscriber wrote them. */
  lines: { level: number; event: string; msg: string }[];
}

/** A maintenance process of its own (own sluice instance), recording the promise events it raises and their log lines. */
function maintenanceProcess(): { sluice: Sluice; maintenance: Maintenance; seen: Seen } {
  const seen: Seen = { broken: [], kept: [], lines: [] };
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      const line = JSON.parse(chunk.toString()) as Seen['lines'][number];
      if (line.event?.startsWith('promise:')) seen.lines.push({ level: line.level, event: line.event, msg: line.msg });
      done();
    },
  });
  const sluice = db.open({ logger: pino({ level: 'info' }, destination) });
  sluice.events.on('promise:broken', (e) => seen.broken.push(e));
  sluice.events.on('promise:kept', (e) => seen.kept.push(e));
  return { sluice, maintenance: sluice.maintenance({ jitterMs: 0 }), seen };
}

async function passes(maintenance: Maintenance, n: number) {
  const counts = [];
  for (let i = 0; i < n; i++) counts.push((await maintenance.runOnce()).tasks.checkQueues);
  return counts;
}

const work = defineJob({ name: 'work', handle: () => undefined });

describe('queue latency promises', () => {
  it('a stalled fleet (no worker): broken once over several passes, also across a change of leader; kept once after the queue drains', async () => {
    await db.sluice.queues.setPromise('late', { startWithinMs: 30_000 });
    await insertJobs(db, 3, { queue: 'late', name: 'work', runAt: ago(2 * MINUTE) });
    // A queue without a promise is read and recorded, never judged.
    await insertJobs(db, 2, { queue: 'unpromised', name: 'work', runAt: ago(10 * MINUTE) });
    const a = maintenanceProcess();
    const b = maintenanceProcess();
    try {
      expect(await passes(a.maintenance, 3)).toEqual([
        { broken: 1, kept: 0 },
        { broken: 0, kept: 0 },
        { broken: 0, kept: 0 },
      ]);
      expect(a.seen.broken).toHaveLength(1);
      const [broken] = a.seen.broken;
      expect(broken).toMatchObject({
        holder: a.maintenance.holder,
        queue: 'late',
        startWithinMs: 30_000,
        maxReady: null,
        breaches: ['startWithin'],
        ready: { count: 3, exact: true },
      });
      expect(broken?.oldestReadyMs).toBeGreaterThanOrEqual(2 * MINUTE);
      expect(a.seen.lines).toEqual([
        {
          level: 40,
          event: 'promise:broken',
          msg: expect.stringMatching(
            /^queue late broke its promise: the oldest ready job waited 1\d\d\.\d s \(promised 30\.0 s\)$/,
          ),
        },
      ]);
      const [state] = await db.sluice.queues.promises();
      expect(state).toMatchObject({ queue: 'late', startWithinMs: 30_000, maxReady: null });
      expect(state?.brokenAt).toBeInstanceOf(Date);

      // The readings the metrics serve: every queue, from this pass.
      const recorded = await db.sluice.queues.recordedDepth();
      expect(recorded.map((r) => [r.queue, r.ready.count])).toEqual([
        ['late', 3],
        ['unpromised', 2],
      ]);
      expect(recorded[1]?.oldestReadyMs).toBeGreaterThanOrEqual(10 * MINUTE);

      // Another maintenance process takes the lead: the promise is still broken, and not reported again.
      await a.maintenance.stop();
      expect(await passes(b.maintenance, 2)).toEqual([
        { broken: 0, kept: 0 },
        { broken: 0, kept: 0 },
      ]);
      expect(b.seen.broken).toEqual([]);

      // Workers come back and drain the queue: kept, once.
      await withWorker(db.sluice, [work], { queues: ['late'] }, () =>
        waitFor(async () => (await countRows(db, 'sluice_jobs', "queue = 'late'")) === 0, { what: 'late drained' }),
      );
      expect(await passes(b.maintenance, 3)).toEqual([
        { broken: 0, kept: 1 },
        { broken: 0, kept: 0 },
        { broken: 0, kept: 0 },
      ]);
      expect(b.seen.kept).toHaveLength(1);
      expect(b.seen.kept[0]).toMatchObject({ queue: 'late', ready: { count: 0, exact: true }, oldestReadyMs: null });
      expect(b.seen.kept[0]?.brokenForMs).toBeGreaterThanOrEqual(0);
      expect(b.seen.lines).toEqual([
        { level: 30, event: 'promise:kept', msg: expect.stringMatching(/^queue late keeps its promise again, after /) },
      ]);
      expect((await db.sluice.queues.promises())[0]?.brokenAt).toBeNull();
      expect(a.seen.kept).toEqual([]);
    } finally {
      await Promise.all([a.maintenance.stop(), b.maintenance.stop()]);
    }
  });

  it('a worker SIGSTOPped: its queue breaks the promise once while it is stopped, and keeps it once after SIGCONT drains it', async () => {
    const worker = spawnWorker(db.url, {
      queues: 'frozen',
      concurrency: 2,
      heartbeatIntervalMs: 200,
      lockTimeoutMs: 60_000,
      pollIntervalMs: 50,
      maxPollIntervalMs: 200,
    });
    await worker.ready;
    await db.sluice.queues.setPromise('frozen', { startWithinMs: 5_000 });
    const { maintenance, seen } = maintenanceProcess();
    try {
      worker.kill('SIGSTOP');
      await waitFor(() => processState(worker.pid) === 'T', { what: 'the worker stopped' });
      const { batchId } = await db.sluice.enqueueBatch(
        Array.from({ length: 4 }, (_, n) => ({ name: 'record', queue: 'frozen', payload: { n } })),
      );
      // The stopped worker cannot claim them; they have been ready a minute (backdated on the DB clock).
      await db.query('UPDATE sluice_jobs SET run_at = NOW(3) - INTERVAL 60 SECOND WHERE batch_id = ?', [batchId]);
      expect(await passes(maintenance, 3)).toEqual([
        { broken: 1, kept: 0 },
        { broken: 0, kept: 0 },
        { broken: 0, kept: 0 },
      ]);
      expect(seen.broken).toMatchObject([{ queue: 'frozen', breaches: ['startWithin'], ready: { count: 4 } }]);

      worker.kill('SIGCONT');
      await waitFor(async () => (await countRows(db, 'test_effects')) === 4, { what: 'the resumed worker drained it' });
      await waitFor(async () => (await countRows(db, 'sluice_jobs', "queue = 'frozen'")) === 0, {
        what: 'the completions written',
      });
      expect(await passes(maintenance, 3)).toEqual([
        { broken: 0, kept: 1 },
        { broken: 0, kept: 0 },
        { broken: 0, kept: 0 },
      ]);
      expect(seen.broken).toHaveLength(1);
      expect(seen.kept).toMatchObject([{ queue: 'frozen' }]);
    } finally {
      worker.kill('SIGCONT');
      await maintenance.stop();
      await worker.stop();
    }
  });

  it('a ready-count promise reads one entry past its limit: broken above it, kept at it', async () => {
    await db.sluice.queues.setPromise('busy', { maxReady: 3 });
    const ids = await insertJobs(db, 5, { queue: 'busy' });
    const { maintenance, seen } = maintenanceProcess();
    try {
      expect(await passes(maintenance, 2)).toEqual([
        { broken: 1, kept: 0 },
        { broken: 0, kept: 0 },
      ]);
      expect(seen.broken).toMatchObject([{ queue: 'busy', breaches: ['maxReady'], ready: { count: 5, exact: true } }]);
      await db.query('DELETE FROM sluice_jobs WHERE id IN (?)', [ids.slice(0, 2)]);
      expect(await passes(maintenance, 2)).toEqual([
        { broken: 0, kept: 1 },
        { broken: 0, kept: 0 },
      ]);
      expect(seen.kept).toMatchObject([{ queue: 'busy', maxReady: 3, ready: { count: 3 } }]);
    } finally {
      await maintenance.stop();
    }
  });

  it('setPromise validates, replaces and withdraws; a withdrawn broken promise raises nothing', async () => {
    const { queues } = db.sluice;
    await expect(queues.setPromise('q', {})).rejects.toThrow(/promises nothing/);
    await expect(queues.setPromise('q', { startWithinMs: 0 })).rejects.toBeInstanceOf(OptionsError);
    await expect(queues.setPromise('q', { maxReady: 1.5 })).rejects.toThrow(/maxReady must be an integer/);
    await expect(queues.setPromise('q', { startWithin: 5 } as never)).rejects.toThrow(/did you mean startWithinMs/);
    await expect(queues.setPromise('bad name', { maxReady: 1 })).rejects.toThrow(/queue name/);
    expect(await queues.promises()).toEqual([]);

    await queues.pause('q');
    await queues.setPromise('q', { startWithinMs: 1_000, maxReady: 10 });
    await queues.setPromise('q', { maxReady: 2 });
    expect(await queues.promises()).toEqual([
      { queue: 'q', startWithinMs: null, maxReady: 2, brokenAt: null, brokenForMs: null },
    ]);
    // A paused queue is held to its promise like any other.
    await insertJobs(db, 3, { queue: 'q' });
    const { maintenance, seen } = maintenanceProcess();
    try {
      await passes(maintenance, 1);
      expect(seen.broken).toHaveLength(1);
      await queues.setPromise('q', null);
      expect(await queues.promises()).toEqual([]);
      expect(await passes(maintenance, 2)).toEqual([
        { broken: 0, kept: 0 },
        { broken: 0, kept: 0 },
      ]);
      expect(seen.kept).toEqual([]);
      // The pause survives the promise's withdrawal.
      expect((await queues.paused()).map((p) => p.queue)).toEqual(['q']);
    } finally {
      await maintenance.stop();
    }
  });

  it('the readings follow the queues: a queue with nothing left is forgotten at the next pass', async () => {
    const ids = await insertJobs(db, 2, { queue: 'brief' });
    await insertJobs(db, 1, { queue: 'stays', lockId: 'elsewhere-1~abc.1' });
    const { maintenance } = maintenanceProcess();
    try {
      await passes(maintenance, 1);
      const [brief, stays] = await db.sluice.queues.recordedDepth();
      const [live] = await db.sluice.queues.depth({ queue: 'brief' });
      // Held jobs (workflows) are counted by the live read only: the recorded depth has no column for them.
      const { oldestReadyMs, held: _held, ...counts } = live ?? { oldestReadyMs: null, held: undefined };
      expect(brief).toMatchObject(counts);
      expect(brief?.oldestReadyMs).toBeLessThanOrEqual(oldestReadyMs as number);
      expect(brief?.readAgeMs).toBeGreaterThanOrEqual(0);
      expect(stays).toMatchObject({ queue: 'stays', running: { count: 1, exact: true }, ready: { count: 0 } });
      await db.query('DELETE FROM sluice_jobs WHERE id IN (?)', [ids]);
      await passes(maintenance, 1);
      expect((await db.sluice.queues.recordedDepth()).map((r) => r.queue)).toEqual(['stays']);
      await db.query('DELETE FROM sluice_jobs');
      await passes(maintenance, 1);
      expect(await db.sluice.queues.recordedDepth()).toEqual([]);
    } finally {
      await maintenance.stop();
    }
  });

  it('queueCheckIntervalMs: passes within it of the last reading read nothing', async () => {
    const clock = fakeClock();
    const maintenance = db.open().maintenance({ jitterMs: 0, queueCheckIntervalMs: 60_000, clock: clock.now });
    try {
      await insertJobs(db, 1, { queue: 'first' });
      await maintenance.runOnce();
      await insertJobs(db, 1, { queue: 'second' });
      clock.advance(59_000);
      await maintenance.runOnce();
      expect((await db.sluice.queues.recordedDepth()).map((r) => r.queue)).toEqual(['first']);
      clock.advance(1_000);
      await maintenance.runOnce();
      expect((await db.sluice.queues.recordedDepth()).map((r) => r.queue)).toEqual(['first', 'second']);
    } finally {
      await maintenance.stop();
    }
  });

  it('sluice queue promise sets and withdraws a promise, promises lists it; wrong flags exit 2', async () => {
    const url = ['--url', db.url];
    const json = (stdout: string) => JSON.parse(stdout.trim().split('\n').at(-1) as string) as unknown;
    const set = await runCli(['queue', 'promise', 'mail', '--start-within-ms', '30000', '--max-ready', '500', ...url]);
    expect(set.code, set.stderr).toBe(0);
    expect(json(set.stdout)).toEqual({ queue: 'mail', promise: { startWithinMs: 30_000, maxReady: 500 } });
    const listed = await runCli(['queue', 'promises', ...url]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(json(listed.stdout)).toEqual({
      promises: [{ queue: 'mail', startWithinMs: 30_000, maxReady: 500, brokenAt: null, brokenForMs: null }],
      next: null,
    });
    const [bare, both, elsewhere, zero] = await Promise.all([
      runCli(['queue', 'promise', 'mail', ...url]),
      runCli(['queue', 'promise', 'mail', '--none', '--max-ready', '5', ...url]),
      runCli(['queue', 'pause', 'mail', '--max-ready', '5', ...url]),
      runCli(['queue', 'promise', 'mail', '--start-within-ms', '0', ...url]),
    ]);
    expect([bare.code, both.code, elsewhere.code, zero.code]).toEqual([2, 2, 2, 2]);
    expect(bare.stderr).toContain('promise needs --start-within-ms, --max-ready, or --none');
    expect(both.stderr).toContain('--none withdraws the promise: give it alone');
    expect(elsewhere.stderr).toContain('go with promise, not pause');
    expect(zero.stderr).toContain('--start-within-ms must be a whole number ≥ 1');
    const withdrawn = await runCli(['queue', 'promise', 'mail', '--none', ...url]);
    expect(withdrawn.code, withdrawn.stderr).toBe(0);
    expect(json(withdrawn.stdout)).toEqual({ queue: 'mail', promise: null });
    expect(await db.sluice.queues.promises()).toEqual([]);
  });
});
