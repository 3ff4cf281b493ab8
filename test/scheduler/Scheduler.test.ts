import { describe, expect, it } from 'vitest';
import { fromKnex } from '../../src/db/executor.ts';
import { readServerInfo } from '../../src/db/serverInfo.ts';
import { defineJob, JobDefinitionError, type Maintenance, type Sluice, type SluiceEventMap } from '../../src/index.ts';
import { resolveSluiceOptions, SLUICE_DEFAULTS } from '../../src/options.ts';
import { Scheduler } from '../../src/scheduler/Scheduler.ts';
import { InstallRetention } from '../../src/settings/InstallRetention.ts';
import type { SluiceRuntime } from '../../src/sluiceRuntime.ts';
import { Ringer } from '../../src/wakeups/Ringer.ts';
import { OPS_JOBS } from '../helpers/runCli.ts';
import { spawnSluice } from '../helpers/spawnSluice.ts';
import { testLogger, useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';

/**
 * README "Recurring jobs": any number of maintenance processes may carry a job with a `schedule`;
 * each cron tick is enqueued exactly once fleet-wide, under the idempotency key
 * `<name>@<tick, UTC ISO>` with payload `{ scheduledAt }`. Duplicates are stopped by a unique key,
 * not by hoping only one scheduler runs.
 */
const db = useTestDatabase('ops_recurring');

/** A yearly sweep: no sweep runs while these tests do; only the schedulers work. */
const NO_SWEEP = '0 0 1 1 *';

interface TickRow {
  id: number;
  queue: string;
  idempotency_key: string;
  payload: string;
}

async function tickJobs(): Promise<TickRow[]> {
  return db.query<TickRow>(
    "SELECT id, queue, idempotency_key, payload FROM sluice_jobs WHERE name = 'tick' ORDER BY id",
  );
}

/** Slot → number of jobs for it, by the payload's scheduledAt (not by the key, so a key that varied per scheduler would show). */
function jobsPerSlot(rows: TickRow[]): Map<string, number> {
  const perSlot = new Map<string, number>();
  for (const row of rows) {
    const { scheduledAt } = JSON.parse(row.payload) as { scheduledAt: string };
    expect(row.idempotency_key).toBe(`tick@${scheduledAt}`);
    expect(scheduledAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/);
    perSlot.set(scheduledAt, (perSlot.get(scheduledAt) ?? 0) + 1);
  }
  return perSlot;
}

/** The context Scheduler runs on, for one sluice instance (its own pool and events). */
function contextOf(sluice: Sluice): SluiceRuntime {
  const exec = fromKnex(sluice.knex);
  let info: ReturnType<typeof readServerInfo> | undefined;
  return {
    knex: sluice.knex,
    db: exec,
    workerDb: exec,
    prefetchDb: null,
    tables: sluice.tables,
    events: sluice.events,
    logger: testLogger,
    options: resolveSluiceOptions({}),
    retention: new InstallRetention(exec, sluice.tables, SLUICE_DEFAULTS, {}, sluice.events),
    serverInfo: () => (info ??= readServerInfo(exec)),
    ringer: new Ringer({ knex: null, tables: sluice.tables, events: sluice.events }),
    doorbellKnex: null,
    writeLane: null,
  };
}

describe('recurring jobs', () => {
  it('three schedulers started together enqueue exactly one job per second-slot', async () => {
    const tick = defineJob({ name: 'tick', schedule: '* * * * * *', handle() {} });
    const instances = [db.open(), db.open(), db.open()];
    const enqueued: SluiceEventMap['schedule:enqueued'][] = [];
    const errors: SluiceEventMap['maintenance:error'][] = [];
    for (const sluice of instances) {
      sluice.events.on('schedule:enqueued', (e) => enqueued.push(e));
      sluice.events.on('maintenance:error', (e) => errors.push(e));
    }
    const maintainers: Maintenance[] = instances.map((s) =>
      s.maintenance({ jobs: [tick], schedule: NO_SWEEP, scheduleJitterMs: 200 }),
    );
    await Promise.all(maintainers.map((m) => m.start()));
    try {
      // About 4 s: until four distinct slots are in the table.
      await waitFor(async () => jobsPerSlot(await tickJobs()).size >= 4, {
        what: 'four second-slots enqueued',
        timeoutMs: 20_000,
      });
    } finally {
      await Promise.all(maintainers.map((m) => m.stop()));
    }
    expect(errors).toEqual([]);
    const rows = await tickJobs();
    const perSlot = jobsPerSlot(rows);
    expect(perSlot.size).toBeGreaterThanOrEqual(3);
    for (const [slot, count] of perSlot) expect(count, `jobs for slot ${slot}`).toBe(1);
    expect(rows.every((r) => r.queue === 'default')).toBe(true);
    // Every scheduler fired for the slots: each slot won once, and the other attempts were duplicates.
    for (const slot of perSlot.keys()) {
      const attempts = enqueued.filter((e) => e.slot === slot);
      expect(
        attempts.filter((e) => !e.duplicate),
        `winners of slot ${slot}`,
      ).toHaveLength(1);
      expect(new Set(attempts.map((e) => e.jobId)).size).toBe(1);
    }
    const attemptsPerSlot = [...perSlot.keys()].map((slot) => enqueued.filter((e) => e.slot === slot).length);
    expect(Math.max(...attemptsPerSlot)).toBe(3);
    // Nothing swept: the maintenance schedule never fired.
    expect(maintainers.every((m) => !m.leading)).toBe(true);
  });

  it('Scheduler.enqueueSlot for the same tick from three instances at once: exactly one wins', async () => {
    const tick = defineJob({ name: 'tick', schedule: '* * * * * *', handle() {} });
    const schedulers = [db.open(), db.open(), db.open()].map((s) => new Scheduler(contextOf(s), [tick], 0));
    const second = Date.UTC(2026, 10, 22, 3, 0, 7);
    // Three processes see the same tick at slightly different moments within its second.
    const results = await Promise.all(
      schedulers.map((s, i) => s.enqueueSlot(tick, new Date(second + [0, 400, 999][i]!))),
    );
    expect(results.map((r) => r.slot)).toEqual(Array(3).fill('2026-11-22T03:00:07.000Z'));
    expect(results.filter((r) => !r.duplicate)).toHaveLength(1);
    expect(new Set(results.map((r) => r.id)).size).toBe(1);
    expect(await tickJobs()).toEqual([
      {
        id: results[0]!.id,
        queue: 'default',
        idempotency_key: 'tick@2026-11-22T03:00:07.000Z',
        payload: '{"scheduledAt":"2026-11-22T03:00:07.000Z"}',
      },
    ]);
    // The next second is another slot.
    const next = await schedulers[0]!.enqueueSlot(tick, new Date(second + 1_000));
    expect(next).toMatchObject({ slot: '2026-11-22T03:00:08.000Z', duplicate: false });
    expect(await tickJobs()).toHaveLength(2);
  });

  it('defineJob rejects a bad cron expression and a bad time zone, and accepts good ones', () => {
    const handle = () => undefined;
    expect(() => defineJob({ name: 'r', schedule: 'every minute', handle })).toThrow(JobDefinitionError);
    expect(() => defineJob({ name: 'r', schedule: '61 * * * *', handle })).toThrow(
      /schedule must be a node-cron expression/,
    );
    expect(() => defineJob({ name: 'r', schedule: '* * * * *', timezone: 'Mars/Olympus_Mons', handle })).toThrow(
      JobDefinitionError,
    );
    expect(() => defineJob({ name: 'r', schedule: '* * * * *', timezone: 'Mars/Olympus_Mons', handle })).toThrow(
      /Mars\/Olympus_Mons/,
    );
    expect(() => defineJob({ name: 'r', timezone: 'Europe/Berlin', handle })).toThrow(/schedule/);
    expect(defineJob({ name: 'r', schedule: '0 30 2 * * *', timezone: 'Europe/Berlin', handle }).timezone).toBe(
      'Europe/Berlin',
    );
    expect(defineJob({ name: 'r', schedule: '*/5 * * * *', handle }).schedule).toBe('*/5 * * * *');
  });

  it('three `sluice sweep --jobs` processes enqueue each tick once', async () => {
    const sweepers = [0, 1, 2].map(() =>
      spawnSluice('maintenance', ['--url', db.url, '--jobs', OPS_JOBS, '--schedule', NO_SWEEP]),
    );
    await Promise.all(sweepers.map((s) => s.ready));
    try {
      await waitFor(async () => jobsPerSlot(await tickJobs()).size >= 3, {
        what: 'three second-slots enqueued',
        timeoutMs: 20_000,
      });
    } finally {
      const exits = await Promise.all(sweepers.map((s) => s.stop()));
      for (const [i, exit] of exits.entries()) expect(exit, sweepers[i]?.describe()).toEqual({ code: 0, signal: null });
    }
    const perSlot = jobsPerSlot(await tickJobs());
    for (const [slot, count] of perSlot) expect(count, `jobs for slot ${slot}`).toBe(1);
    // Each process logged its wins; together, one per slot.
    const wins = sweepers.flatMap((s) =>
      s
        .events('schedule:enqueued')
        .filter((l) => l.duplicate === false)
        .map((l) => l.slot as string),
    );
    expect(wins.sort()).toEqual([...perSlot.keys()].sort());
    expect(sweepers.flatMap((s) => s.events('maintenance:error'))).toEqual([]);
  });
});
