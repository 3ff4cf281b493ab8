import { describe, expect, it } from 'vitest';
import { fromNow, HOUR, insertJob } from '../helpers/factory.ts';
import { jsonOutput, OPS_JOBS, runCli } from '../helpers/runCli.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * README "CLI": `sluice jobs get|list|count|cancel|run-now|retry-now|wait` and `sluice schedules`
 * as real processes: tables for people, one JSON document with --json, exit codes that scripts
 * can test.
 */
const db = useTestDatabase('cli_jobs');

const jobs = (...args: string[]) => runCli(['jobs', ...args, '--url', db.url]);

describe('sluice jobs', () => {
  it('gets a job (table and JSON); exits 1 for an unknown id', async () => {
    const id = await insertJob(db, {
      queue: 'mail',
      name: 'send',
      payload: { to: 'a@example.com' },
      lastError: 'Error: smtp\n  at x',
    });
    const text = await jobs('get', String(id));
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(`job ${id}`);
    expect(text.stdout).toMatch(/state\s+waiting/);
    expect(text.stdout).toContain('{"to":"a@example.com"}');
    expect(text.stdout).toContain('    Error: smtp');
    const json = jsonOutput<{ job: { id: number; state: string; queue: string } }>(
      await jobs('get', String(id), '--json'),
    );
    expect(json.job).toMatchObject({ id, state: 'waiting', queue: 'mail' });
    const missing = await jobs('get', '424242');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no job 424242');
  });

  it('lists page by page with --after, filters by state and queue, and counts', async () => {
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await insertJob(db, { queue: 'p', name: 'n' }));
    const delayed = await insertJob(db, { queue: 'p', name: 'n', runAt: fromNow(HOUR) });
    const first = jsonOutput<{ jobs: { id: number }[]; next: string }>(
      await jobs('list', '--queue', 'p', '--limit', '2', '--json'),
    );
    expect(first.jobs.map((j) => j.id)).toEqual(ids.slice(0, 2));
    const second = jsonOutput<{ jobs: { id: number }[] }>(
      await jobs('list', '--queue', 'p', '--limit', '2', '--after', first.next, '--json'),
    );
    expect(second.jobs.map((j) => j.id)).toEqual([ids[2], delayed]);
    const table = await jobs('list', '--queue', 'p', '--state', 'delayed');
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(new RegExp(`^${delayed}\\s+delayed\\s+p\\s+n`, 'm'));
    expect(table.stdout).not.toContain('next page');
    expect((await jobs('list', '--queue', 'p', '--limit', '1')).stdout).toContain('next page: --after ');
    expect((await jobs('count', '--queue', 'p')).stdout.trim()).toBe('4');
    expect((await jobs('count', '--queue', 'p', '--max', '2')).stdout.trim()).toBe('2+');
    const bad = await jobs('list', '--state', 'sleeping');
    expect(bad.code).toBe(2); // a usage error
    expect(bad.stderr).toMatch(/^sluice jobs: option state must be one of/);
  });

  it('cancels by id and by filter, runs now and retries now, and refuses a cancel with no target', async () => {
    const a = await insertJob(db, { queue: 'c', name: 'x' });
    const b = await insertJob(db, { queue: 'c', name: 'y' });
    const c = await insertJob(db, { queue: 'c', name: 'y' });
    expect(jsonOutput(await jobs('cancel', String(a)))).toEqual({ cancelled: 1 });
    expect(jsonOutput(await jobs('cancel', '--queue', 'c', '--name', 'y', '--batch-size', '1'))).toEqual({
      cancelled: 2,
    });
    for (const id of [a, b, c]) expect((await db.sluice.jobs.get(id))?.state).toBe('cancelled');
    const none = await jobs('cancel');
    expect(none.code).toBe(2); // a usage error
    expect(none.stderr).toContain('needs job ids or at least one filter');

    const later = await insertJob(db, { runAt: fromNow(HOUR) });
    const failed = await insertJob(db, { runAt: fromNow(HOUR), retryTimes: 1 });
    expect(jsonOutput(await jobs('retry-now', `${later},${failed}`))).toEqual({ changed: 1 });
    expect(jsonOutput(await jobs('run-now', String(later)))).toEqual({ changed: 1 });
    expect((await db.sluice.jobs.get(later))?.state).toBe('waiting');
  });

  it('waits for a job: its result, or exit 1 with the reason', async () => {
    const id = await insertJob(db, {});
    await db.query(
      `INSERT INTO sluice_job_history (job_id, queue, name, payload, retry_times, created_at, finished_at, outcome, result)
       VALUES (?, 'default', 'work', '{}', 0, NOW(3), NOW(3), 'completed', '{"sum":3}')`,
      [id + 1000],
    );
    expect(jsonOutput(await jobs('wait', String(id + 1000)))).toEqual({ result: { sum: 3 } });
    const timeout = await jobs('wait', String(id), '--timeout-ms', '100');
    expect(timeout.code).toBe(1);
    expect(timeout.stderr).toContain('SLUICE_WAIT_TIMEOUT');
  });
});

describe('sluice schedules', () => {
  it('lists recurring definitions with their next slot and the last one enqueued', async () => {
    const before = await runCli(['schedules', '--url', db.url, '--jobs', OPS_JOBS, '--json']);
    const [tick] = jsonOutput<{ schedules: Record<string, unknown>[] }>(before).schedules;
    expect(tick).toMatchObject({
      name: 'tick',
      queue: 'default',
      schedule: '* * * * * *',
      lastSlot: null,
      lastJobId: null,
    });
    expect(new Date(tick?.nextSlot as string).getTime()).toBeGreaterThan(Date.now() - 1_000);

    const slot = '2026-01-02T03:04:05.000Z';
    const older = '2026-01-02T03:04:04.000Z';
    await db.sluice.enqueue({ name: 'tick', idempotencyKey: `tick@${older}` });
    const { id } = await db.sluice.enqueue({ name: 'tick', idempotencyKey: `tick@${slot}` });
    const after = jsonOutput<{ schedules: Record<string, unknown>[] }>(
      await runCli(['schedules', '--url', db.url, '--jobs', OPS_JOBS, '--json']),
    ).schedules;
    expect(after.map((s) => s.name)).toEqual(['tick']); // `sleep` has no schedule
    expect(after[0]).toMatchObject({ lastSlot: slot, lastJobId: id, lastJobState: 'waiting' });
    const table = await runCli(['schedules', '--url', db.url, '--jobs', OPS_JOBS]);
    expect(table.stdout).toMatch(
      new RegExp(`tick\\s+default\\s+\\* \\* \\* \\* \\* \\*\\s+\\S+\\s+${slot}\\s+${id} waiting`),
    );
  });
});
