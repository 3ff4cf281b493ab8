import { describe, expect, it } from 'vitest';
import { jsonOutput, runCli } from '../helpers/runCli.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/** `sluice schedules upsert/list/get/pause/resume/remove`: the API's run-time schedules from a terminal. */
const db = useTestDatabase('cli_schedules');

describe('sluice schedules (run-time)', () => {
  it('upserts, lists, pauses, resumes and removes a schedule', async () => {
    const cli = (...args: string[]) => runCli(['schedules', ...args, '--url', db.url]);
    const made = await cli(
      'upsert',
      'digest:ada',
      '--job',
      'send-digest',
      '--cron',
      '0 8 * * *',
      '--tz',
      'Europe/Berlin',
      '--payload',
      '{"user":"ada"}',
      '--json',
    );
    expect(made.code, made.stderr).toBe(0);
    expect(jsonOutput<{ created: boolean }>(made).created).toBe(true);

    const list = jsonOutput<{ schedules: { key: string; tz: string; payload: string }[]; next: string | null }>(
      await cli('list', '--json'),
    );
    expect(list.schedules).toMatchObject([{ key: 'digest:ada', tz: 'Europe/Berlin', payload: '{"user":"ada"}' }]);
    expect(list.next).toBeNull();

    expect((await cli('pause', 'digest:ada')).code).toBe(0);
    expect((await db.sluice.schedules.get('digest:ada'))?.paused).toBe(true);
    const table = await cli('list');
    expect(table.stdout).toMatch(/digest:ada\s+send-digest\s+default\s+0 8 \* \* \* \(Europe\/Berlin\)\s+paused\s+0/);
    expect((await cli('resume', 'digest:ada')).code).toBe(0);
    const got = await cli('get', 'digest:ada', '--json');
    expect(jsonOutput<{ schedule: { paused: boolean } }>(got).schedule.paused).toBe(false);

    const bad = await cli('upsert', 'x', '--job', 'j', '--cron', '* * * * *', '--every-ms', '60000');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('exactly one');

    expect((await cli('remove', 'digest:ada')).code).toBe(0);
    const gone = await cli('remove', 'digest:ada');
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('not found');
  });
});
