import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/runCli.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * docs/flow-control.md "Debounce", race-free: 8 real processes enqueue debounced jobs for the same
 * 10 keys at once, each inside its own application transaction (knex's default isolation) that also
 * records the payload it wrote in `test_last`. In the end each key has exactly one live job, and
 * it holds the payload of the last debounce committed for the key. And throttle, the same way: of
 * all those enqueues exactly one job per key is kept, the rest reported throttled.
 */
const db = useTestDatabase('debounce_race');
const SCRIPT = fileURLToPath(new URL('../fixtures/scripts/debounceKeys.ts', import.meta.url));
const PROCESSES = 8;
const KEYS = 10;
const ROUNDS = 15;

interface Child {
  readonly process: ChildProcess;
  readonly ready: Promise<void>;
  readonly done: Promise<{ code: number | null; stdout: string; stderr: string }>;
}

function start(mode: 'debounce' | 'throttle'): Child {
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT, db.url, String(KEYS), String(ROUNDS), mode], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let onReady!: () => void;
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    if (stdout.split('\n').includes('ready')) onReady();
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, stdout, stderr })),
  );
  return {
    process: child,
    ready: Promise.race([ready, done.then((d) => Promise.reject(new Error(`exited before ready: ${d.stderr}`)))]),
    done,
  };
}

/** Runs the race: every process started, released at once, each exiting 0; their counts, summed. */
async function race(mode: 'debounce' | 'throttle'): Promise<{ enqueued: number; replaced: number }> {
  const children = Array.from({ length: PROCESSES }, () => start(mode));
  try {
    await Promise.all(children.map((c) => c.ready));
    for (const c of children) c.process.stdin?.write('go\n');
    const outcomes = await Promise.all(children.map((c) => c.done));
    for (const o of outcomes) expect(o, o.stderr).toMatchObject({ code: 0 });
    const results = outcomes.map(
      (o) => JSON.parse(o.stdout.trim().split('\n').pop() as string) as { enqueued: number; replaced: number },
    );
    return {
      enqueued: results.reduce((sum, r) => sum + r.enqueued, 0),
      replaced: results.reduce((sum, r) => sum + r.replaced, 0),
    };
  } finally {
    for (const c of children) if (c.process.exitCode === null) c.process.kill('SIGKILL');
  }
}

describe('debounce under concurrent enqueuers', () => {
  it(`${PROCESSES} processes debouncing the same ${KEYS} keys leave one job per key, with the last payload committed`, async () => {
    await db.query('CREATE TABLE IF NOT EXISTS test_last (k VARCHAR(32) PRIMARY KEY, payload TEXT NOT NULL)');
    const { enqueued, replaced } = await race('debounce');
    expect(enqueued).toBe(PROCESSES * KEYS * ROUNDS);
    // Every enqueue but each key's first replaced the waiting job.
    expect(replaced).toBe(enqueued - KEYS);
    const jobs = await db.query<{ id: number; payload: string }>(
      "SELECT id, payload FROM sluice_jobs WHERE queue = 'race'",
    );
    expect(jobs).toHaveLength(KEYS);
    const last = new Map(
      (await db.query<{ k: string; payload: string }>('SELECT k, payload FROM test_last')).map((r) => [r.k, r.payload]),
    );
    expect(last.size).toBe(KEYS);
    for (const job of jobs) {
      const payload = JSON.parse(job.payload) as { key: string };
      expect(job.payload).toBe(last.get(payload.key));
    }
    // The keys table names exactly those jobs.
    const pointed = await db.query<{ job_id: number }>('SELECT job_id FROM sluice_job_debounces ORDER BY job_id');
    expect(pointed.map((r) => Number(r.job_id))).toEqual(jobs.map((j) => Number(j.id)).sort((a, b) => a - b));
  }, 240_000);

  it(`${PROCESSES} processes throttling the same ${KEYS} keys keep exactly one job per key, the rest reported`, async () => {
    await db.query('CREATE TABLE IF NOT EXISTS test_kept (job_id BIGINT PRIMARY KEY)');
    const { enqueued, replaced } = await race('throttle');
    expect(enqueued).toBe(PROCESSES * KEYS * ROUNDS);
    // `replaced` counts the throttled: all but one enqueue per key.
    expect(replaced).toBe(enqueued - KEYS);
    const jobs = await db.query<{ id: number; payload: string }>(
      "SELECT id, payload FROM sluice_jobs WHERE queue = 'throttled' ORDER BY id",
    );
    expect(new Set(jobs.map((j) => (JSON.parse(j.payload) as { key: string }).key)).size).toBe(KEYS);
    expect(jobs).toHaveLength(KEYS);
    // The jobs the enqueuers were told they kept are exactly the ones written.
    const kept = await db.query<{ job_id: number }>('SELECT job_id FROM test_kept ORDER BY job_id');
    expect(kept.map((r) => Number(r.job_id))).toEqual(jobs.map((j) => Number(j.id)));
  }, 240_000);
});
