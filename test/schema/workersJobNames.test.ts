import { describe, expect, it } from 'vitest';
import * as workersJobNames from '../../migrations/202612070100_add_workers_job_names.ts';
import { defineJob } from '../../src/index.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * Migration 202612070100: the job names a worker knows and the names it gave back, on its registry
 * row. Re-runnable (MySQL commits DDL as it goes), and a worker row written before it survives it
 * and reads as knowing nothing it said (an earlier version's worker).
 */
const db = useTestDatabase('workers_job_names');

async function columns(): Promise<string[]> {
  const rows = await db.query<{ name: string }>(
    `SELECT column_name AS name FROM information_schema.columns
     WHERE table_schema = DATABASE() AND table_name = 'sluice_workers' ORDER BY ordinal_position`,
  );
  return rows.map((r) => r.name);
}

describe('migration 202612070100_add_workers_job_names', () => {
  it('goes down and up again, twice over, keeping the registry rows; a worker then publishes its job names', async () => {
    const { knex, tables } = db.sluice;
    await workersJobNames.down(knex, tables);
    expect(await columns()).not.toContain('job_names');
    await db.query(
      `INSERT INTO sluice_workers (id, host, pid, queues, started_at, heartbeat_at, heartbeat_interval_ms, concurrency, concurrency_limit)
       VALUES ('old-1~a', 'old', 1, 'default', NOW(3), NOW(3), 1000, 1, 1)`,
    );
    await workersJobNames.up(knex, tables);
    await workersJobNames.up(knex, tables);
    expect((await columns()).slice(-2)).toEqual(['job_names', 'unknown_jobs']);
    expect(await db.sluice.workers.list()).toEqual([
      expect.objectContaining({ id: 'old-1~a', jobNames: [], unknownJobs: [] }),
    ]);
    const worker = db.sluice.worker({
      queues: ['default'],
      jobs: [defineJob({ name: 'hello', handle: () => undefined })],
    });
    await worker.start();
    try {
      const mine = (await db.sluice.workers.list()).find((w) => w.id === worker.id);
      expect(mine).toMatchObject({ jobNames: ['hello'], unknownJobs: [] });
    } finally {
      await worker.stop();
    }
  });

  it('reads stored values as untrusted: names that are not names, and text that is not JSON, are left out', async () => {
    await db.query(
      `INSERT INTO sluice_workers (id, host, pid, queues, started_at, heartbeat_at, heartbeat_interval_ms, concurrency, concurrency_limit, job_names, unknown_jobs)
       VALUES ('odd-1~b', 'odd', 2, 'default', NOW(3), NOW(3), 1000, 1, 1, ?, ?), ('odd-2~c', 'odd', 3, 'default', NOW(3), NOW(3), 1000, 1, 1, 'not json', '{')`,
      [
        JSON.stringify(['ok', '\u001b[31mred', 7]),
        JSON.stringify([
          { name: 'ghost', queue: 'default', givenBack: 3 },
          { name: '<b>x</b>', queue: 'default', givenBack: 1 },
          { name: 'bad', queue: 'default', givenBack: 'many' },
        ]),
      ],
    );
    const odd = (await db.sluice.workers.list()).filter((w) => w.host === 'odd');
    expect(odd.map((w) => [w.jobNames, w.unknownJobs])).toEqual([
      [['ok'], [{ name: 'ghost', queue: 'default', givenBack: 3 }]],
      [[], []],
    ]);
    expect(await db.sluice.workers.unknownJobs()).toEqual([
      { name: 'ghost', queues: ['default'], workers: 1, givenBack: 3 },
    ]);
  });
});
