import { describe, expect, it } from 'vitest';
import { fromKnex } from '../../src/db/executor.ts';
import { defineJob, type LoadReading } from '../../src/index.ts';
import type { ClaimedRow } from '../../src/worker/claims/claimedRow.ts';
import { prefetchPayloads, readDiskReads } from '../../src/worker/claims/prefetchPayloads.ts';
import { DISK_CHECK_MS, PayloadPrefetch, PREFETCH_SLICES, payloadsOnDisk } from '../../src/worker/PayloadPrefetch.ts';
import { countRows } from '../helpers/factory.ts';
import { randomText } from '../helpers/randomText.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { withWorker } from '../helpers/workerHarness.ts';

/**
 * The read-ahead of payloads stored apart (src/worker/PayloadPrefetch.ts): after a claim that took
 * such payloads, the next stretch of the queue's head is read in slices at once, on a pool of its
 * own, while the server reads pages from disk; never for payloads kept in their rows; and it never
 * changes which jobs run or what they are given.
 */
const db = useTestDatabase('payload_prefetch');

const CALM: LoadReading = { cpu: 0.1, freeMem: 0.8 };
/** A payload stored apart (over 1 KiB as JSON, and not packable), recognisable by `n`. */
const big = (n: number) => ({ n, text: randomText(2_000 + (n % 7) * 500, n) });

/** The statements a sluice instance sends from now on (its own pools forward theirs to sluice.knex). */
function statementsOf(sluice = db.sluice): string[] {
  const sqls: string[] = [];
  sluice.knex.on('query', (query: { sql: string }) => sqls.push(query.sql));
  return sqls;
}
const isReadAhead = (sql: string) => /JOIN `\w*job_payloads` p ON p\.job_id = h\.id/.test(sql);

describe('a worker reading payloads ahead', () => {
  it('reads the head ahead after claims of payloads stored apart; each job runs once with its own payload', async () => {
    const sqls = statementsOf();
    const seen = new Map<number, unknown[]>();
    const record = defineJob({
      name: 'record',
      handle: (payload: unknown, ctx) => {
        seen.set(ctx.job.id, [...(seen.get(ctx.job.id) ?? []), payload]);
      },
    });
    await db.sluice.enqueueBatch(Array.from({ length: 300 }, (_, n) => ({ name: 'record', payload: big(n) })));
    await withWorker(db.sluice, [record], { concurrency: 10, loadSampler: async () => CALM }, () =>
      waitFor(async () => (await countRows(db, 'sluice_jobs')) === 0, { what: 'the live table empty' }),
    );
    expect(seen.size).toBe(300);
    const payloads = [...seen.values()];
    expect(payloads.every((p) => p.length === 1)).toBe(true);
    expect(payloads.map((p) => (p[0] as { n: number }).n).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 300 }, (_, n) => n),
    );
    for (const [, [payload]] of seen) expect(payload).toEqual(big((payload as { n: number }).n));
    // The first claim finds no look taken yet, so it reads ahead whatever the disk does.
    expect(sqls.filter(isReadAhead).length).toBeGreaterThanOrEqual(PREFETCH_SLICES);
  });

  it('never reads ahead, nor looks at the server, for payloads kept in their rows', async () => {
    const sqls = statementsOf();
    const noop = defineJob({ name: 'noop', handle: () => undefined });
    await db.sluice.enqueueBatch(Array.from({ length: 300 }, (_, n) => ({ name: 'noop', payload: { n } })));
    await withWorker(db.sluice, [noop], { concurrency: 10, loadSampler: async () => CALM }, () =>
      waitFor(async () => (await countRows(db, 'sluice_jobs')) === 0, { what: 'the live table empty' }),
    );
    expect(sqls.filter(isReadAhead)).toEqual([]);
    expect(sqls.filter((sql) => sql.includes('Innodb_buffer_pool_reads'))).toEqual([]);
  });
});

describe('prefetchPayloads', () => {
  it("reads the payloads of the queue's next free, due jobs in claim order, in slices that neither overlap nor skip", async () => {
    const enqueue = (queue: string, count: number, extra: object = {}) =>
      db.sluice.enqueueBatch(
        Array.from({ length: count }, (_, n) => ({ name: 'r', queue, payload: big(n), ...extra })),
      );
    await enqueue('q', 30);
    await enqueue('q', 5, { delayMs: 3_600_000 });
    await enqueue('other', 10);
    await db.sluice.enqueueBatch([{ name: 'r', queue: 'q', payload: { small: true } }]);
    // Five of the due ones claimed by someone.
    await db.query(
      "UPDATE sluice_jobs SET lock_id = 'held', locked_at = NOW(3) WHERE queue = 'q' AND payload = '' ORDER BY id LIMIT 5",
    );
    const exec = fromKnex(db.sluice.knex);
    const head = { queue: 'q', priorities: [0] };
    // 25 free and due stored apart, and the small one (no payload row, so not found).
    expect(await prefetchPayloads(exec, db.sluice.tables, head, 100, 4)).toBe(25);
    expect(await prefetchPayloads(exec, db.sluice.tables, head, 26, 4)).toBe(25);
    expect(await prefetchPayloads(exec, db.sluice.tables, head, 9, 4)).toBe(9);
    expect(await prefetchPayloads(exec, db.sluice.tables, { queue: 'q', priorities: [5] }, 100, 4)).toBe(0);
  });

  it("readDiskReads returns the server's count of pages read from disk", async () => {
    const reads = await readDiskReads(fromKnex(db.sluice.knex));
    expect(Number.isInteger(reads)).toBe(true);
    expect(reads).toBeGreaterThanOrEqual(0);
  });
});

describe('PayloadPrefetch', () => {
  it('payloadsOnDisk: pages read from disk per payload claimed at or above 0.05', () => {
    expect(payloadsOnDisk(0, 100)).toBe(false);
    expect(payloadsOnDisk(4, 100)).toBe(false);
    expect(payloadsOnDisk(5, 100)).toBe(true);
    expect(payloadsOnDisk(69, 100)).toBe(true);
    expect(payloadsOnDisk(10, 0)).toBe(false);
  });

  it('stops reading ahead once the server reads nothing from disk, and starts again when it does', async () => {
    await db.sluice.enqueueBatch(Array.from({ length: 50 }, (_, n) => ({ name: 'r', payload: big(n) })));
    const sqls = statementsOf();
    let now = 0;
    let pagesRead = 1_000;
    const prefetch = new PayloadPrefetch(fromKnex(db.sluice.knex), db.sluice.tables, {
      now: () => now,
      diskReads: async () => pagesRead,
    });
    // Claims of 80 rows, each of them as many as a round reads ahead (two claims of 40 wanted).
    const apart = Array.from({ length: 80 }, (_, id) => ({ id, payload_apart: 1 }) as unknown as ClaimedRow);
    const claim = async () => {
      prefetch.afterClaim({ queue: 'default', priorities: [0] }, apart, 40);
      await prefetch.settled();
    };
    const rounds = () => sqls.filter(isReadAhead).length / PREFETCH_SLICES;

    await claim(); // the first look only takes its baseline; reading ahead until told otherwise
    expect(rounds()).toBe(1);
    now += 2 * DISK_CHECK_MS;
    await claim(); // nothing read from disk since: this look turns it off (the round went before it answered)
    await waitFor(async () => !prefetch.active, { what: 'the read-ahead off' });
    expect(rounds()).toBe(2);
    await claim();
    await claim();
    expect(rounds()).toBe(2);

    pagesRead += 15; // 15 pages for the 240 payloads claimed since the last look: over 0.05 a payload
    now += 2 * DISK_CHECK_MS;
    await claim();
    await waitFor(async () => prefetch.active, { what: 'the read-ahead on again' });
    await claim();
    expect(rounds()).toBe(3);
  });

  it('sends the next round only once its claims took as many rows as the last one read', async () => {
    await db.sluice.enqueueBatch(Array.from({ length: 50 }, (_, n) => ({ name: 'r', payload: big(n) })));
    const sqls = statementsOf();
    const prefetch = new PayloadPrefetch(fromKnex(db.sluice.knex), db.sluice.tables, {
      now: () => 0,
      diskReads: async () => 0,
    });
    const ten = Array.from({ length: 10 }, (_, id) => ({ id, payload_apart: 1 }) as unknown as ClaimedRow);
    const statementsAfter: number[] = [];
    for (let claim = 0; claim < 9; claim++) {
      prefetch.afterClaim({ queue: 'default', priorities: [0] }, ten, 40);
      await prefetch.settled();
      statementsAfter.push(sqls.filter(isReadAhead).length);
    }
    // 80 rows ahead (two claims of 40) in four statements of 20; then 80 rows claimed before the next.
    expect(statementsAfter).toEqual([4, 4, 4, 4, 4, 4, 4, 4, 8]);
  });

  it('without a pool of its own (an application knex) it never reads ahead', async () => {
    const sqls = statementsOf();
    const prefetch = new PayloadPrefetch(null, db.sluice.tables);
    prefetch.afterClaim(
      { queue: 'default', priorities: [0] },
      [{ id: 1, payload_apart: 1 } as unknown as ClaimedRow],
      10,
    );
    await prefetch.settled();
    expect(sqls).toEqual([]);
  });
});
