import { randomBytes } from 'node:crypto';
import knexFactory, { type Knex } from 'knex';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { type SluiceEventMap, SluiceEvents } from '../../src/events.ts';
import { CACHED_QUEUES, QUEUES_PER_READ, READS_PER_ROUND } from '../../src/wakeups/DoorbellCache.ts';
import { RING_GAP_MS, Ringer } from '../../src/wakeups/Ringer.ts';
import { KILLS_PER_ROUND } from '../../src/wakeups/ringParked.ts';
import { closeObservers, parkStandIn, type StandInDoorbell } from '../helpers/standInDoorbell.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';

/**
 * The enqueuer's side of the wake-up (src/wakeups/Ringer.ts) against the real server, with
 * stand-in doorbells (test/helpers/standInDoorbell.ts): connections of the test registered as
 * workers' and asleep in the doorbell's own statement.
 */
const db = useTestDatabase('ringer');

interface Harness {
  readonly knex: Knex;
  readonly ringer: Ringer;
  /** Every statement the ringer sent. */
  readonly statements: string[];
  readonly errors: SluiceEventMap['doorbell:error'][];
}

const opened: { harness: Harness; standIns: StandInDoorbell[] }[] = [];

function harness(): Harness {
  const knex = knexFactory({ client: 'mysql2', connection: db.url, pool: { min: 1, max: 1 } });
  const events = new SluiceEvents();
  const statements: string[] = [];
  const errors: SluiceEventMap['doorbell:error'][] = [];
  knex.on('query', (q: { sql: string }) => statements.push(q.sql.trim()));
  events.on('doorbell:error', (e) => errors.push(e));
  const made = { knex, ringer: new Ringer({ knex, tables: db.sluice.tables, events }), statements, errors };
  opened.push({ harness: made, standIns: [] });
  return made;
}

async function standIn(queue: string, workerId: string): Promise<StandInDoorbell> {
  const parked = await parkStandIn(db.url, queue, workerId);
  opened.at(-1)?.standIns.push(parked);
  return parked;
}

afterEach(async () => {
  vi.restoreAllMocks();
  for (const { harness: h, standIns } of opened.splice(0)) {
    await h.ringer.close();
    await h.knex.destroy();
    await Promise.all(standIns.map((s) => s.end()));
  }
});
afterAll(() => closeObservers());

const ring = async (h: Harness, queue: string, jobs: number) => {
  h.ringer.ring('sluice_', new Map([[queue, jobs]]));
  await h.ringer.settled();
};

const kills = (h: Harness) => h.statements.filter((s) => /^KILL/i.test(s));

async function doorbellCount(queue: string): Promise<number> {
  const [row] = await db.query<{ n: number }>('SELECT COUNT(*) AS n FROM sluice_doorbells WHERE queue = ?', [queue]);
  return Number(row?.n);
}

describe('Ringer', () => {
  it(`gathers the rings of a queue that come within ${RING_GAP_MS} ms of its last round into one round`, async () => {
    const h = harness();
    await standIn('steady', 'w-steady');
    await ring(h, 'steady', 1);
    expect(kills(h)).toHaveLength(1);
    // A producer's next enqueues, right after that round: one more round for all of them, once the gap is over.
    // "Right after" is up to the event loop: on a loaded host the gap may already be over when they
    // come, and the first goes alone. So up to three tries; one must gather all ten (ungathered, never).
    let rounds = 0;
    for (let attempt = 0; attempt < 3 && rounds !== 1; attempt++) {
      const before = kills(h).length;
      for (let i = 0; i < 10; i++) h.ringer.ring('sluice_', new Map([['steady', 1]]));
      await h.ringer.settled();
      rounds = kills(h).length - before;
    }
    expect(rounds).toBe(1);
    expect(h.errors).toEqual([]);
  });

  it('a queue nobody waits on costs one read of its doorbells: no question of who the ringer is', async () => {
    const h = harness();
    await ring(h, 'nobody', 1);
    expect(h.statements, h.statements.join('\n')).toHaveLength(1);
    expect(h.statements[0]).toMatch(/^SELECT queue, worker_id/);
    // Within the 100 ms an empty list is kept: nothing at all.
    await ring(h, 'nobody', 1);
    expect(h.statements.length).toBeLessThanOrEqual(2);
    expect(h.errors).toEqual([]);
  });

  it("a pattern's doorbell ('*' then its prefix) is rung by its queues' enqueues, in the same read, and not by others'", async () => {
    const h = harness();
    const tenants = await standIn('*tenant-', 'w-tenants');
    await ring(h, 'other-7', 1);
    expect(tenants.rung()).toBe(false);
    // One statement read that queue's doorbells and the patterns' together.
    expect(h.statements.filter((s) => /^SELECT queue, worker_id/.test(s))).toHaveLength(1);
    await ring(h, 'tenant-7', 1);
    await waitFor(() => tenants.rung(), { timeoutMs: 5_000, what: "the 'tenant-*' doorbell rung" });
    expect(kills(h)).toHaveLength(1);
    expect(h.errors).toEqual([]);
  });

  it('a worker that registers just after the queue was found empty is rung by the next enqueue, not a second later', async () => {
    const h = harness();
    // An enqueue into a queue nobody waits on: the ringer reads (and keeps) an empty list.
    await ring(h, 'fresh', 1);
    // A worker comes up: its doorbell connection registers and sleeps.
    const doorbell = await standIn('fresh', 'w-new');
    // Well within the second a non-empty list is kept, past the 100 ms an empty one is.
    await new Promise((resolve) => setTimeout(resolve, 250));
    await ring(h, 'fresh', 1);
    await waitFor(() => doorbell.rung(), { timeoutMs: 5_000, what: 'the sleeping doorbell rung' });
    expect(h.errors).toEqual([]);
  });

  it('a round is bounded whatever the table holds: 5,000 forged rows cost a handful of statements, not 10,000', async () => {
    const h = harness();
    const live = await standIn('flood', 'w-0-live');
    const rows = Array.from({ length: 5_000 }, (_, n) => [
      'flood',
      `w-forged-${n}`,
      live.server,
      4_000_000_000 + n,
      randomBytes(16).toString('hex'),
      live.user,
    ]);
    await db.query(
      `INSERT INTO sluice_doorbells (queue, worker_id, server, connection_id, token, db_user, created_at) VALUES ${rows
        .map(() => '(?, ?, ?, ?, ?, ?, NOW(3))')
        .join(', ')}`,
      rows.flat(),
    );
    await ring(h, 'flood', 1);
    await waitFor(() => live.rung(), { timeoutMs: 5_000, what: 'the live doorbell rung' });
    // Who it is, the doorbells (one bounded read), the process list, one DELETE of the gone, one KILL.
    expect(h.statements.length, h.statements.join('\n')).toBeLessThanOrEqual(6);
    expect(kills(h)).toHaveLength(1);
    // Rows read and found gone were deleted (the rest stay for maintenance, or the next rounds).
    expect(await doorbellCount('flood')).toBeLessThan(5_001);
    expect(h.errors).toEqual([]);
  });

  it('a ring after a commit over 3,000 queues reads their doorbells in a handful of statements, not one per queue', async () => {
    const h = harness();
    const queues = Array.from({ length: 3_000 }, (_, n) => `spread-${String(n).padStart(4, '0')}`);
    // Two workers waiting, at either end of the list (so in two different reads).
    const first = await standIn('spread-0007', 'w-first');
    const last = await standIn('spread-2999', 'w-last');
    h.ringer.ring('sluice_', new Map(queues.map((q) => [q, 1])));
    await h.ringer.settled();
    await waitFor(() => first.rung() && last.rung(), { timeoutMs: 5_000, what: 'both doorbells rung' });
    // 6 reads of 500 queues, who the ringer is, the process list for each read that found rows, 2 KILLs.
    const reads = Math.ceil(queues.length / QUEUES_PER_READ);
    expect(h.statements.length, h.statements.slice(0, 20).join('\n')).toBeLessThanOrEqual(reads + 1 + 2 + 2);
    expect(h.statements.filter((s) => /^SELECT queue, worker_id/.test(s))).toHaveLength(reads);
    expect(kills(h)).toHaveLength(2);
    expect(h.errors).toEqual([]);
  });

  it('a commit over more queues than a round reads rings the rest in the next round', async () => {
    const h = harness();
    const count = QUEUES_PER_READ * READS_PER_ROUND + QUEUES_PER_READ;
    const queues = Array.from({ length: count }, (_, n) => `many-${String(n).padStart(5, '0')}`);
    // The last in binary order: past the first round's reads.
    const last = await standIn(queues.at(-1) as string, 'w-last');
    h.ringer.ring('sluice_', new Map(queues.map((q) => [q, 1])));
    await h.ringer.settled();
    await waitFor(() => last.rung(), { timeoutMs: 5_000, what: 'the last queue rung' });
    expect(h.statements.filter((s) => /^SELECT queue, worker_id/.test(s))).toHaveLength(count / QUEUES_PER_READ);
    expect(h.errors).toEqual([]);
  });

  it(`keeps a copy of at most ${CACHED_QUEUES} queues' doorbells after rings to 50,000 distinct queues`, async () => {
    const h = harness();
    for (let start = 0; start < 50_000; start += 5_000) {
      const queues = Array.from({ length: 5_000 }, (_, n) => [`tenant-${start + n}`, 1] as const);
      h.ringer.ring('sluice_', new Map(queues));
      await h.ringer.settled();
      expect(h.ringer.cachedQueues).toBeLessThanOrEqual(CACHED_QUEUES);
    }
    // Every queue was read (in reads of QUEUES_PER_READ), none is kept past the cap.
    expect(h.statements).toHaveLength(50_000 / QUEUES_PER_READ);
    expect(h.ringer.cachedQueues).toBe(CACHED_QUEUES);
    expect(h.errors).toEqual([]);
  });

  it(`a batch sends at most ${KILLS_PER_ROUND} KILLs per round, however many doorbells are asleep`, async () => {
    const h = harness();
    const many: StandInDoorbell[] = [];
    for (let n = 0; n < KILLS_PER_ROUND + 8; n++) many.push(await standIn('many', `w-${String(n).padStart(3, '0')}`));
    await ring(h, 'many', 10_000);
    expect(kills(h)).toHaveLength(KILLS_PER_ROUND);
    await waitFor(() => many.filter((d) => d.rung()).length === KILLS_PER_ROUND, { what: 'the rung doorbells woke' });
    expect(h.errors).toEqual([]);
  });

  it("a row naming the ringer's own connection is never rung, and the round's other rings go out", async () => {
    const h = harness();
    // The ringer's pool holds one connection: the one it will ring over.
    const [[own]] = (await h.knex.raw('SELECT CONNECTION_ID() AS id')) as [{ id: number }[]];
    const live = await standIn('self', 'w-live');
    await db.query(
      'INSERT INTO sluice_doorbells (queue, worker_id, server, connection_id, token, db_user, created_at) VALUES (?, ?, ?, ?, ?, ?, NOW(3))',
      ['self', 'w-self', live.server, own?.id, randomBytes(16).toString('hex'), live.user],
    );
    await ring(h, 'self', 2);
    await waitFor(() => live.rung(), { timeoutMs: 5_000, what: 'the live doorbell rung' });
    expect(h.errors).toEqual([]);
    // The ringer goes on ringing.
    const next = await standIn('self-next', 'w-next');
    await ring(h, 'self-next', 1);
    await waitFor(() => next.rung(), { timeoutMs: 5_000, what: 'the next doorbell rung' });
    expect(h.errors).toEqual([]);
  });

  it("a killed worker's orphaned sleep does not swallow the ring: one more doorbell is rung, a live one", async () => {
    const h = harness();
    // A worker SIGKILLed while asleep: its client is gone, its server thread sleeps on.
    const dead = await standIn('orphan', 'w-a-dead');
    dead.orphan();
    const live = await standIn('orphan', 'w-b-live');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const stillThere = async () =>
      (await db.query('SELECT ID FROM information_schema.PROCESSLIST WHERE ID = ?', [dead.id])).length === 1;
    expect(await stillThere(), 'the orphaned sleep is still on the server').toBe(true);
    // No shuffle: the doorbells in worker-id order, the dead one first. One job.
    vi.spyOn(Math, 'random').mockReturnValue(0);
    await ring(h, 'orphan', 1);
    vi.restoreAllMocks();
    await waitFor(() => live.rung(), { timeoutMs: 5_000, what: 'the live doorbell rung' });
    expect(kills(h)).toHaveLength(2);
    // The KILL ended all that was left of the dead one; the next ring finds it gone and drops its row.
    await waitFor(async () => !(await stillThere()), { what: 'the orphaned thread gone' });
    await ring(h, 'orphan', 1);
    const rows = await db.query<{ worker_id: string }>('SELECT worker_id FROM sluice_doorbells WHERE queue = ?', [
      'orphan',
    ]);
    expect(rows.map((r) => r.worker_id)).toEqual(['w-b-live']);
    expect(h.errors).toEqual([]);
  });
});
