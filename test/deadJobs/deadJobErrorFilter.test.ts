import { describe, expect, it } from 'vitest';
import { defineJob } from '../../src/index.ts';
import { countRows } from '../helpers/factory.ts';
import { jsonLine, runCli } from '../helpers/runCli.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { recordEvents, withWorker } from '../helpers/workerHarness.ts';

/**
 * Dead jobs listed, re-driven and purged by the error they died of: `errorCode` (the code of their
 * last kept attempt error) and `errorContains` (their last error's text, ignoring case) — through
 * sluice.deadJobs and `sluice dead … --error-code / --error-contains`.
 */
const db = useTestDatabase('dead_error_filter');

class CodedError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

/** Dies at once with the code and message its payload names (an earlier attempt failed otherwise). */
const doomed = defineJob<{ code: string; message: string }>({
  name: 'doomed',
  maxRetries: 1,
  backoff: { type: 'fixed', delayMs: 0 },
  handle(payload, ctx) {
    if (ctx.job.retryTimes === 0) throw new CodedError('first attempt: something else', 'FIRST');
    throw new CodedError(payload.message, payload.code);
  },
});

async function killAll(payloads: { code: string; message: string }[]): Promise<number[]> {
  const sluice = db.open();
  const events = recordEvents(sluice);
  const ids: number[] = [];
  for (const payload of payloads) ids.push((await sluice.enqueue({ name: 'doomed', payload })).id);
  await withWorker(sluice, [doomed], { concurrency: 4 }, () =>
    waitFor(() => events['job:dead'].length === payloads.length, { what: 'every job dead' }),
  );
  return ids;
}

describe('dead jobs by the error they died of', () => {
  it('lists, re-drives and purges by errorCode and errorContains', async () => {
    const [refused, timedOut, refusedToo] = (await killAll([
      { code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 10.0.0.1:25' },
      { code: 'ETIMEDOUT', message: 'Mail server timed out' },
      { code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 10.0.0.2:25' },
    ])) as [number, number, number];
    const dead = db.sluice.deadJobs;
    const ids = async (filter: Parameters<typeof dead.list>[0]) => (await dead.list(filter)).map((j) => j.id);

    expect(await ids({ errorCode: 'ECONNREFUSED' })).toEqual([refused, refusedToo]);
    // The code it died of, not one of an earlier attempt.
    expect(await ids({ errorCode: 'FIRST' })).toEqual([]);
    expect(await ids({ errorContains: 'timed OUT' })).toEqual([timedOut]);
    expect(await ids({ errorContains: '10.0.0.2' })).toEqual([refusedToo]);
    // LIKE's wildcards are matched literally.
    expect(await ids({ errorContains: '%' })).toEqual([]);

    expect(await dead.redrive({ errorCode: 'ETIMEDOUT' })).toEqual({ redriven: 1 });
    expect(await countRows(db, 'sluice_jobs')).toBe(1);
    expect(await dead.purge({ errorCode: 'ECONNREFUSED', errorContains: '10.0.0.1' })).toEqual({ purged: 1 });
    expect(await ids({})).toEqual([refusedToo]);
  });

  it('sluice dead takes --error-code and --error-contains', async () => {
    const [refused, timedOut] = (await killAll([
      { code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' },
      { code: 'ETIMEDOUT', message: 'timed out' },
    ])) as [number, number];
    const url = ['--url', db.url];
    const [byCode, byText] = await Promise.all([
      runCli(['dead', 'list', '--json', '--error-code', 'ECONNREFUSED', ...url]),
      runCli(['dead', 'list', '--json', '--error-contains', 'TIMED', ...url]),
    ]);
    const listed = (result: typeof byCode) =>
      jsonLine<{ deadJobs: { id: number }[] }>(result, 'deadJobs').deadJobs.map((j) => j.id);
    expect(listed(byCode)).toEqual([refused]);
    expect(listed(byText)).toEqual([timedOut]);
    // A filter of its own is enough for purge (no --all).
    const purge = await runCli(['dead', 'purge', '--error-code', 'ETIMEDOUT', ...url]);
    expect(purge.code, purge.stderr).toBe(0);
    expect(jsonLine(purge, 'purged')).toEqual({ purged: 1 });
  });
});
