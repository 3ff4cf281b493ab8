import { spawn } from 'node:child_process';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { defineJob } from '../src/index.ts';
import { createLogger } from '../src/logging.ts';
import { ROOT } from './helpers/sourceCli.ts';
import { useTestDatabase } from './helpers/testDatabase.ts';
import { waitFor } from './helpers/waitFor.ts';
import { recordEvents, withWorker } from './helpers/workerHarness.ts';

const db = useTestDatabase('logging');

/** A pino logger whose lines land in `lines`. */
function capture(): { logger: pino.Logger; lines: string[] } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { logger: pino({ level: 'info' }, sink), lines };
}

describe('what reaches a log line', () => {
  it('a failed job’s error is logged as type, message, code and stack, bounded: never its other fields', async () => {
    const leaky = defineJob({
      name: 'leaky',
      backoff: { type: 'fixed', delayMs: 60_000 },
      handle() {
        const error = new Error(`request failed: ${'x'.repeat(10 * 1024 * 1024)}`);
        Object.assign(error, { code: 'E_HTTP', config: { headers: { Authorization: 'Bearer sk_live_abc123' } } });
        throw error;
      },
    });
    const { logger, lines } = capture();
    const sluice = db.open({ logger });
    const events = recordEvents(sluice);
    await sluice.enqueue({ name: 'leaky' });
    await withWorker(sluice, [leaky], {}, () =>
      waitFor(() => events['job:retried'].length === 1, { what: 'the retry' }),
    );
    const failed = lines.filter((l) => l.includes('"job:failed"'));
    expect(failed).toHaveLength(1);
    expect(failed[0]).not.toContain('sk_live');
    expect(failed[0]).toContain('E_HTTP');
    expect(failed[0]!.length).toBeLessThan(40_000);
    expect(lines.every((l) => !l.includes('sk_live'))).toBe(true);
  });

  it('sluice’s own logger censors credentials by their usual names, and the app’s own paths', () => {
    const chunks: string[] = [];
    const destination = new Writable({
      write(chunk, _encoding, done) {
        chunks.push(String(chunk));
        done();
      },
    });
    const logger = createLogger({ level: 'info', redact: ['card.number'], destination });
    logger.info({ password: 'hunter2', headers: { authorization: 'Basic abc' }, card: { number: '4242' } }, 'x');
    const text = chunks.join('');
    expect(text).not.toMatch(/hunter2|Basic abc|4242/);
    expect(text).toContain('[redacted]');
  });

  it('an error from the server carries its message, never the statement (which carries payloads)', async () => {
    await db.query(`
      CREATE TRIGGER sluice_jobs_refuse BEFORE INSERT ON sluice_jobs FOR EACH ROW
      BEGIN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'refused by trigger';
      END`);
    try {
      const error = (await db.sluice
        .enqueueBatch([{ name: 'work', payload: { card: 'SECRET-4242' } }])
        .catch((e: unknown) => e)) as Error & { sql?: string };
      expect(error.message).toContain('refused by trigger');
      expect(error.message).not.toContain('SECRET-4242');
      expect(error.sql).toBeUndefined();
      expect(JSON.stringify(error)).not.toContain('SECRET-4242');
    } finally {
      await db.query('DROP TRIGGER IF EXISTS sluice_jobs_refuse');
    }
  });
});

describe('an application script', () => {
  const SCRIPT = fileURLToPath(new URL('./fixtures/scripts/appScript.ts', import.meta.url));

  /** Runs the script to its end with no LOG_LEVEL in its environment; its exit code and output. */
  function run(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const { LOG_LEVEL: _level, ...env } = process.env;
    const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT, db.url, ...args], { cwd: ROOT, env });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  }

  it('prints nothing when it enqueues: the library is quiet unless given a logger or a level', async () => {
    const quiet = await run();
    expect(quiet).toEqual({ code: 0, stdout: '', stderr: '' });
    const asked = await run('info');
    expect(asked.code).toBe(0);
    expect(asked.stdout).toContain('"event":"batch:enqueued"');
    const rows = await db.query<{ n: number }>('SELECT COUNT(*) AS n FROM sluice_jobs');
    expect(Number(rows[0]?.n)).toBe(6);
  });
});
