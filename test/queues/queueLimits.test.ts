import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { describe, expect, it } from 'vitest';
import { parseRate } from '../../src/cli/limitFlags.ts';
import { type ClaimStrategy, defineJob, OptionsError, SluiceMetrics } from '../../src/index.ts';
import { countRows } from '../helpers/factory.ts';
import { jsonLine, runCli } from '../helpers/runCli.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { deferred, withWorker } from '../helpers/workerHarness.ts';

/**
 * docs/flow-control.md: a queue's cap and rate, set through sluice.queues.setLimits, validated
 * (a typed error naming the bad value, nothing written), read back with their use, and obeyed by a
 * worker that was started before the limit existed and is never restarted.
 */
const db = useTestDatabase('queue_limits');

const limitClaims = async (queue: string) =>
  Number((await db.query<{ n: number }>('SELECT limit_claims AS n FROM sluice_queues WHERE queue = ?', [queue]))[0]?.n);

describe('queues.setLimits', () => {
  it('refuses bad limits with an OptionsError naming the value, and writes nothing', async () => {
    const bad: [unknown, string][] = [
      [{ concurrency: 0 }, 'concurrency'],
      [{ concurrency: 1.5 }, 'concurrency'],
      [{ rate: { limit: 0, intervalMs: 1000 } }, 'rate.limit'],
      [{ rate: { limit: 5, intervalMs: -1 } }, 'rate.intervalMs'],
      [{ rate: { limit: 5, interval: 1000 } }, 'interval'],
      [{ concurency: 3 }, 'concurency'],
      [{}, 'limits'],
    ];
    for (const [limits, option] of bad) {
      const error = await db.sluice.queues.setLimits('q', limits as never).catch((e: unknown) => e);
      expect(error, JSON.stringify(limits)).toBeInstanceOf(OptionsError);
      expect((error as OptionsError).option).toBe(option);
    }
    await expect(db.sluice.queues.setLimits('bad queue!', { concurrency: 1 })).rejects.toThrow(/queue/);
    expect(await countRows(db, 'sluice_queues')).toBe(0);
  });

  it('sets, reads back with use, changes one limit leaving the other, and removes them with null', async () => {
    const { queues } = db.sluice;
    await queues.setLimits('api', { concurrency: 3, rate: { limit: 100, intervalMs: 60_000 } });
    expect(await queues.limits()).toMatchObject([
      {
        queue: 'api',
        concurrency: 3,
        rate: { limit: 100, intervalMs: 60_000 },
        running: 0,
        rateUsed: 0,
        blocked: null,
      },
    ]);
    await queues.setLimits('api', { concurrency: 5 });
    expect((await queues.limits())[0]).toMatchObject({ concurrency: 5, rate: { limit: 100, intervalMs: 60_000 } });
    await queues.setLimits('api', { rate: null });
    expect((await queues.limits())[0]).toMatchObject({ concurrency: 5, rate: null });
    await queues.setLimits('api', { concurrency: null });
    expect(await queues.limits()).toEqual([]);
  });
});

describe('sluice queue limit', () => {
  it('sets and removes limits, lists them with their use; a bad rate exits 2 and writes nothing', async () => {
    const url = ['--url', db.url];
    const set = await runCli(['queue', 'limit', 'mail', '--concurrency', '4', '--rate', '100/1m', ...url]);
    expect(set.code, set.stderr).toBe(0);
    expect(jsonLine(set, 'queue')).toEqual({
      queue: 'mail',
      limits: { concurrency: 4, rate: { limit: 100, intervalMs: 60_000 } },
    });
    const [listed, bad] = await Promise.all([
      runCli(['queue', 'limits', ...url]),
      runCli(['queue', 'limit', 'other', '--rate', '100 per minute', ...url]),
    ]);
    expect(jsonLine<{ limits: unknown[] }>(listed, 'limits').limits).toEqual([
      expect.objectContaining({ queue: 'mail', concurrency: 4, running: 0, rateUsed: 0, blocked: null }),
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--rate must be N/DURATION');
    // sluice stats says which queue holds its ready jobs back, and why.
    await db.sluice.enqueue({ name: 'x', queue: 'mail' });
    await db.query("UPDATE sluice_queues SET paused_until = NOW(3) + INTERVAL 1 MINUTE WHERE queue = 'mail'");
    const stats = await runCli(['stats', '--json', ...url]);
    expect(jsonLine<{ queues: { queue: string; heldBack: string | null }[] }>(stats, 'queues').queues).toEqual([
      expect.objectContaining({ queue: 'mail', heldBack: 'paused' }),
    ]);
    await db.query("UPDATE sluice_queues SET paused_until = NULL WHERE queue = 'mail'");
    const cleared = await runCli(['queue', 'limit', 'mail', '--concurrency', 'none', '--rate', 'none', ...url]);
    expect(cleared.code, cleared.stderr).toBe(0);
    expect(await db.sluice.queues.limits()).toEqual([]);
    expect(parseRate('5/500ms')).toEqual({ limit: 5, intervalMs: 500 });
    expect(parseRate('20/s')).toEqual({ limit: 20, intervalMs: 1_000 });
  });
});

describe('a limited queue', () => {
  for (const claim of ['random-head', 'skip-locked'] as ClaimStrategy[]) {
    it(`never runs more than its cap, and a cap changed at run time takes effect without a restart (${claim})`, async () => {
      const sluice = db.open();
      let running = 0;
      let most = 0;
      const release = deferred();
      const job = defineJob({
        name: 'held',
        handle: async () => {
          running++;
          most = Math.max(most, running);
          await release.promise;
          running--;
        },
      });
      await sluice.enqueueBatch(Array.from({ length: 12 }, () => ({ name: 'held', queue: 'capped' })));
      await withWorker(sluice, [job], { claim, queues: ['capped'], concurrency: 10, pollIntervalMs: 100 }, async () => {
        // Unlimited at first: the worker's slots fill.
        await waitFor(() => running === 10, { what: '10 running before any cap' });
        release.resolve();
        await waitFor(async () => (await countRows(db, 'sluice_jobs')) === 0, { what: 'the first twelve done' });
      });
      expect(most).toBe(10);

      // A cap set while a worker runs: it learns of it without a restart.
      const gate = { open: deferred() };
      let running2 = 0;
      let most2 = 0;
      const capped = defineJob({
        name: 'held',
        handle: async () => {
          running2++;
          most2 = Math.max(most2, running2);
          await gate.open.promise;
          running2--;
        },
      });
      await sluice.queues.setLimits('capped', { concurrency: 2 });
      await sluice.enqueueBatch(Array.from({ length: 8 }, () => ({ name: 'held', queue: 'capped' })));
      await withWorker(
        sluice,
        [capped],
        { claim, queues: ['capped'], concurrency: 10, pollIntervalMs: 100 },
        async () => {
          await waitFor(() => running2 === 2, { what: '2 running under a cap of 2' });
          expect((await sluice.queues.limits())[0]).toMatchObject({ running: 2, blocked: 'concurrency' });
          // Several claim rounds later, still 2.
          const before = await limitClaims('capped');
          await waitFor(async () => (await limitClaims('capped')) >= before + 2, { what: 'more limited claims' });
          expect(running2).toBe(2);
          // Raised at run time: the same worker takes more.
          await sluice.queues.setLimits('capped', { concurrency: 5 });
          await waitFor(() => running2 === 5, { what: '5 running under a cap of 5' });
          // Removed: the worker goes back to the ordinary claim, which never writes the queue's row.
          await sluice.queues.setLimits('capped', { concurrency: null });
          await waitFor(() => running2 === 8, { what: 'all 8 running without a cap' });
          const after = await limitClaims('capped');
          gate.open.resolve();
          await waitFor(async () => (await countRows(db, 'sluice_jobs')) === 0, { what: 'the queue drained' });
          expect(await limitClaims('capped')).toBe(after);
        },
      );
      expect(most2).toBe(8);
      await sluice.close();
    });
  }

  it('starts no more than its rate per window, and the rest wait for the next window', async () => {
    const sluice = db.open();
    const starts: number[] = [];
    const job = defineJob({ name: 'tick', handle: () => void starts.push(Date.now()) });
    await sluice.queues.setLimits('rated', { rate: { limit: 5, intervalMs: 1_000 } });
    const first = Math.floor(Date.now() / 1000); // no claim comes before the enqueue
    await sluice.enqueueBatch(Array.from({ length: 12 }, () => ({ name: 'tick', queue: 'rated' })));
    await withWorker(sluice, [job], { queues: ['rated'], concurrency: 10, pollIntervalMs: 100 }, async () => {
      await waitFor(() => starts.length === 12, { what: '12 starts', timeoutMs: 10_000 });
    });
    // Windows are aligned to the clock. A start lags its claim (a few ms; more on a busy host), never
    // leads it: by the end of the n-th window since the enqueue at most 5n have started, and 12 jobs
    // at 5 a window take at least three windows, so the last starts two windows after the enqueue's
    // or later. (Counting the windows the starts fell in fails on a busy host: the first window's
    // starts can lag into the second.)
    const windows = starts.map((t) => Math.floor(t / 1000));
    for (const w of new Set(windows))
      expect(windows.filter((s) => s <= w).length, JSON.stringify(windows)).toBeLessThanOrEqual((w - first + 1) * 5);
    expect(Math.max(...windows) - first, JSON.stringify(windows)).toBeGreaterThanOrEqual(2);
    await sluice.close();
  });

  it('jobs.get says when a waiting job is held back by its queue, and why', async () => {
    const sluice = db.open();
    const { queues, jobs } = sluice;
    const { id } = await sluice.enqueue({ name: 'x', queue: 'held' });
    expect((await jobs.get(id))?.queueHold).toBeNull();
    await queues.setLimits('held', { rate: { limit: 1, intervalMs: 60_000 } });
    expect((await jobs.get(id))?.queueHold).toBeNull();
    // The window's only start taken (as a limited claim would count it): held until the window ends.
    await db.query(
      `UPDATE sluice_queues SET rate_window_ms = FLOOR(FLOOR(UNIX_TIMESTAMP(NOW(3)) * 1000) / 60000) * 60000, rate_used = 1
       WHERE queue = 'held'`,
    );
    const rate = (await jobs.get(id))?.queueHold;
    expect(rate?.reason).toBe('rate');
    expect((rate?.until?.getTime() ?? 0) % 60_000).toBe(0);
    await queues.setLimits('held', { rate: null, concurrency: 1 });
    await db.query("UPDATE sluice_jobs SET lock_id = 'someone~1' WHERE id = ?", [
      (await sluice.enqueue({ name: 'x', queue: 'held' })).id,
    ]);
    expect((await jobs.get(id))?.queueHold).toEqual({ reason: 'concurrency', until: null });
    // The metrics tell a queue held back by its cap apart from one waiting for a worker.
    const text = await new SluiceMetrics(sluice, 0).render();
    expect(text).toContain('sluice_queue_concurrency_cap{queue="held"} 1');
    expect(text).toContain('sluice_queue_limited_running{queue="held"} 1');
    expect(text).toContain('sluice_queue_blocked{queue="held",reason="concurrency"} 1');
    expect(text).toContain('sluice_queue_blocked{queue="held",reason="rate"} 0');
    await queues.pause('held');
    expect((await jobs.get(id))?.queueHold).toEqual({ reason: 'paused', until: null });
    await sluice.close();
  });

  it('a queue without limits claims with the statements it always did: none reads or writes its queue row', async () => {
    const sluice = db.open();
    const job = defineJob({ name: 'plain', handle: () => undefined });
    await sluice.enqueueBatch(Array.from({ length: 50 }, () => ({ name: 'plain', queue: 'free' })));
    const sent: string[] = [];
    const onStart = (message: unknown) => sent.push(String((message as { query?: unknown }).query ?? ''));
    subscribe('tracing:mysql2:query:start', onStart);
    try {
      await withWorker(sluice, [job], { queues: ['free'], concurrency: 5, pollIntervalMs: 100 }, async () => {
        await waitFor(async () => (await countRows(db, 'sluice_jobs')) === 0, { what: 'the queue drained' });
      });
    } finally {
      unsubscribe('tracing:mysql2:query:start', onStart);
    }
    // Statements arrive with their values in place (knex binds on the client). The claim's own
    // check of the queue's row is inside its UPDATE; nothing else touches the row:
    // no gate read (readQueueGate), no limited claim, no write.
    const claims = sent.filter((sql) =>
      /^\s*UPDATE `sluice_jobs`\s+SET lock_id = '[^']+',\s+locked_at = NOW\(3\)/.test(sql),
    );
    expect(claims.length).toBeGreaterThan(0);
    expect(sent.filter((sql) => /FROM `sluice_queues`\s+WHERE queue = /.test(sql))).toEqual([]);
    expect(sent.filter((sql) => /UPDATE[^`]*`sluice_queues`/.test(sql))).toEqual([]);
    expect(await countRows(db, 'sluice_queues')).toBe(0);
    await sluice.close();
  });
});
