import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

interface Result {
  readonly enqueued: number;
  readonly replaced: number;
}

interface Child {
  readonly process: ChildProcess;
  readonly ready: Promise<void>;
  /** The result line of the race the process runs now (rejects if it exits first). */
  next(): Promise<Result>;
  readonly done: Promise<{ code: number | null; stderr: string }>;
}

function start(): Child {
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT, db.url, String(KEYS), String(ROUNDS)], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  const lines: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  createInterface({ input: child.stdout as Readable }).on('line', (line) => {
    const resolve = waiting.shift();
    if (resolve) resolve(line);
    else lines.push(line);
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const done = new Promise<{ code: number | null; stderr: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, stderr })),
  );
  const line = () =>
    Promise.race([
      new Promise<string>((resolve) => {
        const queued = lines.shift();
        if (queued === undefined) waiting.push(resolve);
        else resolve(queued);
      }),
      done.then((d) => Promise.reject(new Error(`exited with ${d.code}: ${d.stderr}`))),
    ]);
  return {
    process: child,
    ready: line().then((l) => expect(l).toBe('ready')),
    next: async () => JSON.parse(await line()) as Result,
    done,
  };
}

/**
 * The same PROCESSES processes run both races, one after the other: each race releases all of them
 * at once, with the processes started and connected beforehand, as a fresh set would be.
 */
let children: Child[] = [];

beforeAll(async () => {
  children = Array.from({ length: PROCESSES }, () => start());
  await Promise.all(children.map((c) => c.ready));
});

afterAll(async () => {
  for (const c of children) c.process.stdin?.end();
  const outcomes = await Promise.all(children.map((c) => c.done));
  for (const o of outcomes) expect(o, o.stderr).toMatchObject({ code: 0 });
});

/** Runs one race: every process released at once; their counts, summed. */
async function race(mode: 'debounce' | 'throttle'): Promise<Result> {
  const results = children.map((c) => c.next());
  for (const c of children) c.process.stdin?.write(`go ${mode}\n`);
  const outcomes = await Promise.all(results);
  return {
    enqueued: outcomes.reduce((sum, r) => sum + r.enqueued, 0),
    replaced: outcomes.reduce((sum, r) => sum + r.replaced, 0),
  };
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
