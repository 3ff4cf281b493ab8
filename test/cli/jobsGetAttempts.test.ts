import { describe, expect, it } from 'vitest';
import { insertJob } from '../helpers/factory.ts';
import { jsonOutput, runCli } from '../helpers/runCli.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/** `sluice jobs get` shows a job's attempt errors (newest first) and its ctx.log lines; --json carries them whole. */
const db = useTestDatabase('cli_job_attempts');

describe('sluice jobs get: attempts', () => {
  it('prints attempt errors and log lines, and carries them in --json', async () => {
    const id = await insertJob(db, { retryTimes: 2 });
    await db.query(
      `INSERT INTO sluice_job_errors (job_id, attempt, failed_at, worker_id, code, message, stack) VALUES
       (?, 1, '2026-11-26 10:00:00.000', 'host-1~k1', 'ECONNREFUSED', 'connect refused', 'Error: connect refused\n    at x'),
       (?, 2, '2026-11-26 10:01:00.000', NULL, NULL, 'boom', NULL)`,
      [id, id],
    );
    await db.query(
      `INSERT INTO sluice_job_logs (job_id, attempt, line, logged_at, message, fields, dropped) VALUES
       (?, 1, 1, '2026-11-26 10:00:00.500', 'connecting', '{"host":"smtp"}', 0),
       (?, 2, 1, '2026-11-26 10:01:00.500', 'retrying', NULL, 0),
       (?, 2, 0, '2026-11-26 10:01:00.600', '', NULL, 4)`,
      [id, id, id],
    );
    const url = ['--url', db.url];
    const [text, json] = await Promise.all([
      runCli(['jobs', 'get', String(id), ...url]),
      runCli(['jobs', 'get', String(id), '--json', ...url]),
    ]);
    expect(text.code, text.stderr).toBe(0);
    const lines = text.stdout.split('\n');
    const errorsAt = lines.findIndex((l) => l.includes('attempt errors'));
    expect(lines.slice(errorsAt + 1, errorsAt + 3)).toEqual([
      '    #2  2026-11-26T10:01:00.000Z  -  boom',
      '    #1  2026-11-26T10:00:00.000Z  host-1~k1  [ECONNREFUSED] connect refused',
    ]);
    const logAt = lines.findIndex((l) => l.trim() === 'log');
    expect(lines.slice(logAt + 1, logAt + 4)).toEqual([
      '    2026-11-26T10:00:00.500Z  #1  connecting  {"host":"smtp"}',
      '    2026-11-26T10:01:00.500Z  #2  retrying',
      '    … 4 more line(s) dropped',
    ]);
    const { job } = jsonOutput<{ job: { errors: { attempt: number; stack: string | null }[]; logsDropped: number } }>(
      json,
    );
    expect(job.errors.map((e) => [e.attempt, e.stack])).toEqual([
      [2, null],
      [1, 'Error: connect refused\n    at x'],
    ]);
    expect(job.logsDropped).toBe(4);
  });
});
