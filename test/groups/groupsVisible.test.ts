import { describe, expect, it } from 'vitest';
import { fromKnex } from '../../src/db/executor.ts';

import { tablesFor } from '../../src/db/tables.ts';
import { SluiceMetrics } from '../../src/index.ts';
import { ClaimTokens } from '../../src/worker/ClaimTokens.ts';
import { claimRandomHead } from '../../src/worker/claims/claimRandomHead.ts';
import { completeJobs } from '../../src/worker/claims/completeJobs.ts';
import { jsonOutput, runCli } from '../helpers/runCli.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

const db = useTestDatabase('groups_visible');
const tables = tablesFor('sluice_');

describe('groups, seen from outside', () => {
  it('jobs.get says why a held job waits; limits() counts group-held jobs apart', async () => {
    await db.sluice.queues.setLimits('q', { groupConcurrency: 1 });
    await db.sluice.enqueueBatch([1, 2, 3].map((n) => ({ name: 'x', queue: 'q', payload: { n }, group: 'acct' })));
    const [first, second] = (await db.query<{ id: number }>('SELECT id FROM sluice_jobs ORDER BY id')).map((r) =>
      Number(r.id),
    );
    const free = await db.sluice.jobs.get(first as number);
    expect(free).toMatchObject({ state: 'waiting', group: 'acct', groupHold: null });
    const held = await db.sluice.jobs.get(second as number);
    expect(held).toMatchObject({
      state: 'held',
      group: 'acct',
      groupHold: { group: 'acct', limit: 1, fair: false, active: 1 },
    });
    const [limits] = await db.sluice.queues.limits();
    expect(limits).toMatchObject({ queue: 'q', groupConcurrency: 1, fairWindow: null, groupHeld: 2 });
    const text = await new SluiceMetrics(db.sluice, 0).render();
    expect(text).toContain('sluice_queue_group_concurrency{queue="q"} 1');
    expect(text).toContain('sluice_queue_group_held{queue="q"} 2');
    expect(text).not.toContain('sluice_queue_group_rate_limit{');
    await db.sluice.queues.setLimits('q', { groupRate: { limit: 5, intervalMs: 2_000 } });
    expect((await db.sluice.queues.limits())[0]?.groupRate).toEqual({ limit: 5, intervalMs: 2_000 });
    const rated = await new SluiceMetrics(db.sluice, 0).render();
    expect(rated).toContain('sluice_queue_group_rate_limit{queue="q"} 5');
    expect(rated).toContain('sluice_queue_group_rate_interval_seconds{queue="q"} 2');
  });

  it('sluice queue limit / groups / group-limit', async () => {
    const url = db.url;
    const set = await runCli(['queue', 'limit', 'q', '--group-concurrency', '2', '--fair', '--url', url]);
    expect(set.code, set.stderr).toBe(0);
    expect(jsonOutput(set)).toEqual({ queue: 'q', limits: { groupConcurrency: 2, fair: true } });
    await db.sluice.enqueueBatch([1, 2, 3].map((n) => ({ name: 'x', queue: 'q', payload: { n }, group: 'g' })));
    const one = await runCli(['queue', 'group-limit', 'q', 'g', '--concurrency', '3', '--url', url]);
    expect(jsonOutput(one)).toEqual({ queue: 'q', group: 'g', concurrency: 3, released: 1 });
    const groups = await runCli(['queue', 'groups', 'q', '--url', url]);
    const unrated = { rate: null, effectiveRate: null, rateUsed: 0, nextStartAt: null, pausedUntil: null };
    expect(jsonOutput(groups)).toEqual({
      queue: 'q',
      groups: [{ group: 'g', concurrency: 3, effectiveLimit: 3, active: 3, ...unrated }],
    });
    // A queue default rate of 2 a day: of group h's 3 jobs, 2 take today's window and 1 tomorrow's,
    // so today's is used up and the next job would start at tomorrow's (UTC days, the DB clock).
    const DAY_MS = 86_400_000;
    await db.sluice.queues.setLimits('q', { groupRate: { limit: 2, intervalMs: DAY_MS } });
    await db.sluice.enqueueBatch([1, 2, 3].map((n) => ({ name: 'x', queue: 'q', payload: { n }, group: 'h' })));
    await db.query("UPDATE sluice_job_groups SET paused_until = NOW(3) + INTERVAL 1 HOUR WHERE group_key = 'g'");
    const listed = jsonOutput<{ groups: Record<string, unknown>[] }>(
      await runCli(['queue', 'groups', 'q', '--url', url]),
    );
    const [g, h] = listed.groups;
    const daily = { limit: 2, intervalMs: DAY_MS };
    expect(h).toMatchObject({ group: 'h', rate: null, effectiveRate: daily, rateUsed: 2, pausedUntil: null });
    const next = Date.parse(h?.nextStartAt as string);
    expect(next % DAY_MS).toBe(0);
    expect(next).toBeGreaterThan(Date.now() - 60_000);
    // g reserved nothing yet: its next job waits out the pause only.
    expect(g).toMatchObject({ group: 'g', effectiveRate: daily, rateUsed: 0 });
    expect(g?.pausedUntil).toEqual(expect.any(String));
    expect(g?.nextStartAt).toBe(g?.pausedUntil);
    const bad = await runCli(['queue', 'limit', 'q', '--fair-window', '5', '--url', url]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/--fair-window goes with --fair/);
  });

  it('a job with a group but no limit, on a queue that is not fair, pays no group statement after its enqueue', async () => {
    const sluice = db.open();
    const statements: string[] = [];
    sluice.knex.on('query', (q: { sql: string }) => statements.push(q.sql));
    await sluice.enqueueBatch(
      Array.from({ length: 20 }, (_, i) => ({ name: 'plain', payload: { i }, group: `g${i % 2}` })),
    );
    // The limits' policy read (one for both groups) and the rates' read of which groups have a rate
    // or a pause of their own: reads only, nothing written to job_groups or job_holds.
    expect(statements.filter((s) => /job_groups|job_holds/.test(s))).toHaveLength(2);
    expect(statements.filter((s) => /^\s*(INSERT|UPDATE|DELETE)[\s\S]*job_(groups|holds)/.test(s))).toEqual([]);
    statements.length = 0;
    await sluice.enqueueBatch([{ name: 'plain' }]);
    expect(statements.join('\n')).not.toMatch(/job_groups|job_holds/);
    statements.length = 0;
    const exec = fromKnex(sluice.knex);
    const lockId = new ClaimTokens().next();
    const rows = await claimRandomHead(exec, tables, {
      queue: 'default',
      priorities: [0],
      want: 21,
      lockId,
      headSize: 50,
    });
    expect(rows).toHaveLength(21);
    await completeJobs(
      exec,
      tables,
      lockId,
      rows.map((r) => Number(r.id)),
      { history: false, wholeClaimOf: 'default' },
    );
    // The enqueue's ring may still be on its way (the Ringer gathers rings): its doorbell read is not the claim's.
    const ours = statements.filter((s) => !/doorbells/.test(s));
    // head, claim, load, delete (a statement re-run after a transient error under load adds one).
    expect(ours.length, ours.join('\n---\n')).toBeGreaterThanOrEqual(4);
    expect(ours.filter((s) => /^\s*(SELECT|UPDATE|DELETE)/.test(s)).length).toBeLessThanOrEqual(5);
    expect(statements.join('\n')).not.toMatch(/job_groups|job_holds|flags <> 0/);
  });
});
