import { describe, expect, it } from 'vitest';
import { jsonOutput, runCli } from '../helpers/runCli.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * `sluice stats` over 1,200 queues: the first 200 in name order, one row each, and the 1,000 past
 * them summed in a last row that says how many they are. Before, the table stopped at the 200th
 * queue and nothing said that 1,000 more held jobs.
 */
const db = useTestDatabase('stats_others');

describe('sluice stats over 1,200 queues', () => {
  it('sums the queues past the first 200 in one last row, in the table and in --json', async () => {
    // Two jobs per queue: one due, one delayed an hour.
    await db.query(
      `INSERT INTO sluice_jobs (queue, name, payload, priority, run_at, created_at)
       SELECT CONCAT('q', LPAD(1 + (seq DIV 2), 5, '0')), 'work', '{}', 0,
              IF(seq % 2 = 0, NOW(3) - INTERVAL 1 SECOND, NOW(3) + INTERVAL 1 HOUR), NOW(3)
       FROM seq_0_to_2399`,
    );
    const table = await runCli(['stats', '--url', db.url]);
    expect(table.code, table.stderr).toBe(0);
    const lines = table.stdout.trim().split('\n');
    expect(lines.filter((l) => /^q\d{5} /.test(l))).toHaveLength(200);
    expect(lines.at(-1)).toMatch(/^\(1000 more queues\)\s+1000\s+1000\s+0\s+0\s+0\s+-\s+-$/);

    const json = jsonOutput<{ queues: unknown[]; others: unknown }>(await runCli(['stats', '--json', '--url', db.url]));
    expect(json.queues).toHaveLength(200);
    expect(json.others).toEqual({
      queues: { count: 1_000, exact: true },
      ready: { count: 1_000, exact: true },
      notDue: { count: 1_000, exact: true },
      held: { count: 0, exact: true },
      running: { count: 0, exact: true },
      dead: { count: 0, exact: true },
    });
  });
});
