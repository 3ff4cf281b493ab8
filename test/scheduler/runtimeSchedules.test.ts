import { describe, expect, it } from 'vitest';
import { OptionsError } from '../../src/index.ts';
import { tickKey } from '../../src/scheduler/fireSchedules.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * docs/schedules.md: run-time schedules are rows, created, changed, paused and removed while
 * the install runs; the maintenance pass fires the due ones. Time is moved by backdating
 * next_run_at (never by sleeping).
 */
const db = useTestDatabase('runtime_schedules');
const NO_SWEEP = '0 0 1 1 *';

async function dbNow(): Promise<number> {
  const [row] = await db.query<{ now: Date }>('SELECT NOW(3) AS now');
  return row!.now.getTime();
}

async function jobsOf(name: string) {
  return db.query<{ id: number; queue: string; idempotency_key: string; payload: string }>(
    'SELECT id, queue, idempotency_key, payload FROM sluice_jobs WHERE name = ? ORDER BY id',
    [name],
  );
}

async function pass() {
  const maintenance = db.sluice.maintenance({ schedule: NO_SWEEP, jitterMs: 0 });
  try {
    return await maintenance.runOnce();
  } finally {
    await maintenance.stop();
  }
}

/** Puts a schedule's next run `ms` in the past, as if maintenance had not run since. */
async function backdate(key: string, ms: number): Promise<void> {
  await db.query('UPDATE sluice_schedules SET next_run_at = NOW(3) - INTERVAL ? MICROSECOND WHERE schedule_key = ?', [
    ms * 1000,
    key,
  ]);
}

describe('run-time schedules', () => {
  it('a schedule whose stored payload does not parse stops alone; the others due beside it fire', async () => {
    for (const key of ['bad:one', 'good:one', 'good:two'])
      await db.sluice.schedules.upsert({ key, job: 'tick-job', every: 60_000, payload: { key } });
    await db.query("UPDATE sluice_schedules SET payload = '{not json' WHERE schedule_key = 'bad:one'");
    for (const key of ['bad:one', 'good:one', 'good:two']) await backdate(key, 1_000);
    await pass();
    const fired = (await jobsOf('tick-job')).map((j) => JSON.parse(j.payload).key).sort();
    expect(fired).toEqual(['good:one', 'good:two']);
    const [bad] = await db.query<{ next_run_at: Date | null }>(
      "SELECT next_run_at FROM sluice_schedules WHERE schedule_key = 'bad:one'",
    );
    expect(bad?.next_run_at).toBeNull();
  });

  it('upsert writes a schedule whose next run is its first tick after now; the pass fires it once', async () => {
    const now = await dbNow();
    const { schedule, created } = await db.sluice.schedules.upsert({
      key: 'digest:ada',
      job: 'send-digest',
      queue: 'mail',
      cron: '0 8 * * *',
      tz: 'Europe/Berlin',
      payload: { user: 'ada' },
    });
    expect(created).toBe(true);
    expect(schedule).toMatchObject({ key: 'digest:ada', job: 'send-digest', queue: 'mail', paused: false, runs: 0 });
    const next = schedule.nextRunAt!.getTime();
    expect(next).toBeGreaterThan(now);
    expect(next - now).toBeLessThanOrEqual(86_400_000 + 3_600_000);
    // 08:00 in Berlin is 06:00 or 07:00 UTC.
    expect([6, 7]).toContain(schedule.nextRunAt!.getUTCHours());

    expect((await pass()).tasks.fireSchedules).toEqual({ fired: 0, advanced: 0 });
    await backdate('digest:ada', 1_000);
    const [row] = await db.query<{ next_run_at: Date }>(
      'SELECT next_run_at FROM sluice_schedules WHERE schedule_key = ?',
      ['digest:ada'],
    );
    const due = row!.next_run_at;
    expect((await pass()).tasks.fireSchedules).toEqual({ fired: 1, advanced: 1 });
    const jobs = await jobsOf('send-digest');
    expect(jobs).toEqual([
      {
        id: jobs[0]!.id,
        queue: 'mail',
        idempotency_key: tickKey('digest:ada', due.getTime()),
        payload: '{"user":"ada"}',
      },
    ]);
    const after = await db.sluice.schedules.get('digest:ada');
    expect(after).toMatchObject({ runs: 1, lastJobId: jobs[0]!.id, lastTickAt: due });
    expect(after!.nextRunAt!.getTime()).toBeGreaterThan(await dbNow());
    const runs = await db.sluice.schedules.runs('digest:ada');
    expect(runs).toEqual([{ seq: 1, tickAt: due, jobId: jobs[0]!.id, queue: 'mail', firedAt: runs[0]!.firedAt }]);
    // The fire's batch says what wrote it.
    const [batch] = await db.query<{ name: string }>(
      'SELECT b.name FROM sluice_batches b JOIN sluice_jobs j ON j.batch_id = b.id WHERE j.id = ?',
      [jobs[0]!.id],
    );
    expect(batch?.name).toBe('schedules');
    // Nothing is due any more.
    expect((await pass()).tasks.fireSchedules).toEqual({ fired: 0, advanced: 0 });
    expect(await jobsOf('send-digest')).toHaveLength(1);
  });

  it('refuses a bad schedule at the call, writing nothing', async () => {
    const bad = [
      { key: 'a', job: 'x' },
      { key: 'a', job: 'x', cron: '* * * * *', every: 60_000 },
      { key: 'a', job: 'x', cron: 'every day' },
      { key: 'a', job: 'x', every: 10 },
      { key: 'a', job: 'x', cron: '* * * * *', tz: 'Mars/Olympus' },
      { key: 'a b', job: 'x', every: 60_000 },
      { key: 'a', job: 'bad name', every: 60_000 },
      { key: 'a', job: 'x', every: 60_000, missed: 'some' },
      { key: 'a', job: 'x', every: 60_000, limit: 0 },
      { key: 'a', job: 'x', every: 60_000, payload: { n: Number.NaN } },
      { key: 'a', job: 'x', every: 60_000, startAt: new Date(2030, 0, 1), endAt: new Date(2029, 0, 1) },
      { key: 'a', job: 'x', every: 60_000, evry: 1 },
    ];
    for (const spec of bad) {
      await expect(db.sluice.schedules.upsert(spec as never), JSON.stringify(spec)).rejects.toBeInstanceOf(
        OptionsError,
      );
    }
    await expect(db.sluice.schedules.list({ limit: 0 })).rejects.toBeInstanceOf(OptionsError);
    await expect(db.sluice.schedules.list({ after: 'a', max: 1 } as never)).rejects.toBeInstanceOf(OptionsError);
    expect(await db.query('SELECT * FROM sluice_schedules')).toEqual([]);
  });

  it('an upsert that keeps the timing keeps the next run; one that changes it starts from now', async () => {
    const first = await db.sluice.schedules.upsert({ key: 'k', job: 'j', every: 3_600_000, payload: { v: 1 } });
    const again = await db.sluice.schedules.upsert({ key: 'k', job: 'j', every: 3_600_000, payload: { v: 2 } });
    expect(again.created).toBe(false);
    expect(again.schedule.nextRunAt).toEqual(first.schedule.nextRunAt);
    expect(again.schedule.payload).toBe('{"v":2}');
    const changed = await db.sluice.schedules.upsert({ key: 'k', job: 'j', every: 60_000 });
    expect(changed.schedule.nextRunAt!.getTime()).toBeLessThan(first.schedule.nextRunAt!.getTime());
    expect(changed.schedule.every).toBe(60_000);
  });

  it('pause stops a schedule, resume starts it again, remove deletes it', async () => {
    await db.sluice.schedules.upsert({ key: 'p', job: 'tick', every: 60_000 });
    await backdate('p', 500);
    expect(await db.sluice.schedules.pause('p')).toBe(true);
    expect(await db.sluice.schedules.pause('p')).toBe(false);
    expect(await db.sluice.schedules.get('p')).toMatchObject({ paused: true, nextRunAt: null });
    expect((await pass()).tasks.fireSchedules).toEqual({ fired: 0, advanced: 0 });
    expect(await jobsOf('tick')).toEqual([]);

    expect(await db.sluice.schedules.resume('p')).toBe(true);
    expect(await db.sluice.schedules.resume('p')).toBe(false);
    const resumed = await db.sluice.schedules.get('p');
    expect(resumed).toMatchObject({ paused: false });
    expect(resumed!.nextRunAt!.getTime()).toBeGreaterThan(await dbNow());
    await backdate('p', 500);
    expect((await pass()).tasks.fireSchedules).toEqual({ fired: 1, advanced: 1 });

    expect(await db.sluice.schedules.remove('p')).toBe(true);
    expect(await db.sluice.schedules.remove('p')).toBe(false);
    expect(await db.sluice.schedules.get('p')).toBeNull();
    expect(await db.sluice.schedules.runs('p')).toEqual([]);
    expect(await db.query('SELECT * FROM sluice_schedule_runs')).toEqual([]);
    // The job it fired stays.
    expect(await jobsOf('tick')).toHaveLength(1);
  });

  it("missed ticks: 'skip' fires none of them, 'once' the latest, 'all' each", async () => {
    const now = await dbNow();
    // Hourly ticks at now − 3.5 h, − 2.5 h, − 1.5 h, − 0.5 h (then + 0.5 h).
    const startAt = new Date(now - 3.5 * 3_600_000);
    for (const missed of ['skip', 'once', 'all'] as const) {
      await db.sluice.schedules.upsert({ key: missed, job: `missed-${missed}`, every: 3_600_000, startAt, missed });
      await db.query('UPDATE sluice_schedules SET next_run_at = ? WHERE schedule_key = ?', [startAt, missed]);
    }
    expect((await pass()).tasks.fireSchedules).toEqual({ fired: 5, advanced: 3 });
    expect(await jobsOf('missed-skip')).toEqual([]);
    const once = await jobsOf('missed-once');
    expect(once.map((j) => j.idempotency_key)).toEqual([tickKey('once', startAt.getTime() + 3 * 3_600_000)]);
    const all = await jobsOf('missed-all');
    expect(all.map((j) => j.idempotency_key)).toEqual(
      [0, 1, 2, 3].map((h) => tickKey('all', startAt.getTime() + h * 3_600_000)),
    );
    for (const missed of ['skip', 'once', 'all']) {
      const s = await db.sluice.schedules.get(missed);
      expect(s!.nextRunAt!.getTime(), missed).toBe(startAt.getTime() + 4 * 3_600_000);
    }
    expect((await db.sluice.schedules.runs('all')).map((r) => r.seq)).toEqual([4, 3, 2, 1]);
  });

  it('limit and endAt end a schedule: no next run once over', async () => {
    const now = await dbNow();
    const startAt = new Date(now - 10 * 60_000);
    await db.sluice.schedules.upsert({ key: 'lim', job: 'lim', every: 60_000, startAt, missed: 'all', limit: 3 });
    await db.sluice.schedules.upsert({
      key: 'end',
      job: 'end',
      every: 60_000,
      startAt,
      missed: 'all',
      endAt: new Date(now - 7.5 * 60_000),
    });
    await db.query('UPDATE sluice_schedules SET next_run_at = ?', [startAt]);
    await pass();
    expect(await jobsOf('lim')).toHaveLength(3);
    expect(await jobsOf('end')).toHaveLength(3);
    expect(await db.sluice.schedules.get('lim')).toMatchObject({ runs: 3, nextRunAt: null });
    expect(await db.sluice.schedules.get('end')).toMatchObject({ runs: 3, nextRunAt: null });
  });

  it('list pages through the schedules by key, bounded', async () => {
    for (let i = 0; i < 7; i++) await db.sluice.schedules.upsert({ key: `s${i}`, job: 'j', every: 60_000 });
    const keys: string[] = [];
    let after = '';
    for (let page = 0; page < 10; page++) {
      const got = await db.sluice.schedules.list({ after, limit: 3 });
      expect(got.schedules.length).toBeLessThanOrEqual(3);
      keys.push(...got.schedules.map((s) => s.key));
      if (got.next === null) break;
      after = got.next;
    }
    expect(keys).toEqual(['s0', 's1', 's2', 's3', 's4', 's5', 's6']);
  });

  it('keeps the latest 20 runs of a schedule', async () => {
    const now = await dbNow();
    const startAt = new Date(now - 30 * 60_000 + 500);
    await db.sluice.schedules.upsert({ key: 'many', job: 'many', every: 60_000, startAt, missed: 'all' });
    await db.query('UPDATE sluice_schedules SET next_run_at = ?', [startAt]);
    await pass();
    expect(await jobsOf('many')).toHaveLength(30);
    const runs = await db.sluice.schedules.runs('many');
    expect(runs.map((r) => r.seq)).toEqual(Array.from({ length: 20 }, (_, i) => 30 - i));
    expect(await db.query('SELECT seq FROM sluice_schedule_runs')).toHaveLength(20);
  });

  it('a 02:30 Europe/Berlin schedule fires one job on the spring-forward and on the fall-back day', async () => {
    for (const [key, from, to] of [
      ['spring', '2026-03-27T12:00:00Z', '2026-03-30T12:00:00Z'],
      ['fall', '2026-10-23T12:00:00Z', '2026-10-26T12:00:00Z'],
    ] as const) {
      await db.sluice.schedules.upsert({
        key,
        job: `dst-${key}`,
        cron: '30 2 * * *',
        tz: 'Europe/Berlin',
        missed: 'all',
        startAt: new Date(from),
        endAt: new Date(to),
      });
      // Made while its days are past: over at once. Put its next run back on its first tick.
      await db.query('UPDATE sluice_schedules SET next_run_at = ? WHERE schedule_key = ?', [
        new Date(key === 'spring' ? '2026-03-28T01:30:00Z' : '2026-10-24T00:30:00Z'),
        key,
      ]);
    }
    await pass();
    const ticksOf = async (name: string) =>
      (await jobsOf(name)).map((j) => j.idempotency_key.slice(j.idempotency_key.indexOf('@') + 1));
    expect(await ticksOf('dst-spring')).toEqual([
      '2026-03-28T01:30:00.000Z',
      '2026-03-29T01:30:00.000Z',
      '2026-03-30T00:30:00.000Z',
    ]);
    expect(await ticksOf('dst-fall')).toEqual([
      '2026-10-24T00:30:00.000Z',
      '2026-10-25T00:30:00.000Z',
      '2026-10-26T01:30:00.000Z',
    ]);
  });
});
