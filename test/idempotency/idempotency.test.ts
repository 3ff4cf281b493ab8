import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { defineJob, JobValidationError, PermanentJobError } from '../../src/index.ts';
import { countRows } from '../helpers/factory.ts';
import { ROOT } from '../helpers/runCli.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { recordEvents, withWorker } from '../helpers/workerHarness.ts';

/**
 * README "Idempotency keys": one job per (queue, key) while live and for the retention after it
 * finished; duplicates are reported, not errors; keys are reserved race-free through the primary
 * key of sluice_idempotency_keys, across processes.
 */
const db = useTestDatabase('sem_idempotency');

interface KeyRow {
  queue: string;
  idempotency_key: string;
  job_id: number | null;
  owner: string;
  expires_at: Date | null;
}

async function keyRows(): Promise<KeyRow[]> {
  const rows = await db.query<KeyRow>(
    'SELECT queue, idempotency_key, job_id, owner, expires_at FROM sluice_idempotency_keys ORDER BY queue, idempotency_key',
  );
  return rows.map((r) => ({ ...r, job_id: r.job_id === null ? null : Number(r.job_id) }));
}

/** Milliseconds from NOW(3) to a key's expires_at, on the DB clock. */
async function msUntilExpiry(key: string): Promise<number> {
  const [row] = await db.query<{ ms: string }>(
    'SELECT TIMESTAMPDIFF(MICROSECOND, NOW(3), expires_at) / 1000 AS ms FROM sluice_idempotency_keys WHERE idempotency_key = ?',
    [key],
  );
  return Number(row?.ms);
}

describe('enqueue with an idempotency key', () => {
  it('returns {id, duplicate: false}, then the same id with duplicate: true, writing nothing the second time', async () => {
    const first = await db.sluice.enqueue({ name: 'mail', payload: { v: 1 }, idempotencyKey: 'order-1' });
    expect(first).toEqual({ id: expect.any(Number), duplicate: false });
    const keysBefore = await keyRows();
    expect(keysBefore).toEqual([
      { queue: 'default', idempotency_key: 'order-1', job_id: first.id, owner: expect.any(String), expires_at: null },
    ]);

    const again = await db.sluice.enqueue({ name: 'mail', payload: { v: 2 }, idempotencyKey: 'order-1' });
    expect(again).toEqual({ id: first.id, duplicate: true });
    expect(await db.query('SELECT id, payload FROM sluice_jobs')).toEqual([{ id: first.id, payload: '{"v":1}' }]);
    expect(await keyRows()).toEqual(keysBefore);
    expect(await countRows(db, 'sluice_batches')).toBe(0);
  });

  it('enqueueBatch writes the new keys and reports the duplicates as skipped', async () => {
    const held = await db.sluice.enqueue({ name: 'mail', idempotencyKey: 'b' });
    const result = await db.sluice.enqueueBatch([
      { name: 'mail', idempotencyKey: 'a', payload: { n: 0 } },
      { name: 'mail', idempotencyKey: 'b', payload: { n: 1 } },
      { name: 'mail', payload: { n: 2 } },
      { name: 'mail', idempotencyKey: 'c', payload: { n: 3 } },
    ]);
    expect(result).toEqual({ batchId: expect.any(Number), count: 3, skipped: 1 });
    const rows = await db.query<{ id: number; idempotency_key: string | null; payload: string }>(
      'SELECT id, idempotency_key, payload FROM sluice_jobs WHERE batch_id = ? ORDER BY id',
      [result.batchId],
    );
    expect(rows.map((r) => [r.idempotency_key, JSON.parse(r.payload).n])).toEqual([
      ['a', 0],
      [null, 2],
      ['c', 3],
    ]);
    expect(await db.sluice.batches.get(result.batchId as number)).toMatchObject({ size: 3, pending: 3 });
    expect((await keyRows()).find((k) => k.idempotency_key === 'b')?.job_id).toBe(held.id);

    // A batch of nothing but duplicates writes no batch at all.
    expect(
      await db.sluice.enqueueBatch([
        { name: 'mail', idempotencyKey: 'a' },
        { name: 'mail', idempotencyKey: 'c' },
      ]),
    ).toEqual({
      batchId: null,
      count: 0,
      skipped: 2,
    });
    expect(await countRows(db, 'sluice_batches')).toBe(1);
    expect(await countRows(db, 'sluice_jobs')).toBe(4);
  });

  it('rejects a key repeated inside one batch with JobValidationError, writing nothing', async () => {
    const error = await db.sluice
      .enqueueBatch([
        { name: 'mail', idempotencyKey: 'x' },
        { name: 'mail', idempotencyKey: 'y' },
        { name: 'mail', idempotencyKey: 'x' },
      ])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JobValidationError);
    expect(error).toMatchObject({ index: 2, field: 'idempotencyKey' });
    expect(await countRows(db, 'sluice_jobs')).toBe(0);
    expect(await countRows(db, 'sluice_batches')).toBe(0);
    expect(await countRows(db, 'sluice_idempotency_keys')).toBe(0);
  });

  it('treats the same key in two queues as two jobs', async () => {
    const a = await db.sluice.enqueue({ name: 'mail', queue: 'eu', idempotencyKey: 'same' });
    const b = await db.sluice.enqueue({ name: 'mail', queue: 'us', idempotencyKey: 'same' });
    expect([a.duplicate, b.duplicate]).toEqual([false, false]);
    expect(a.id).not.toBe(b.id);
    // The same key repeated across queues inside one batch is no repetition either.
    const batch = await db.sluice.enqueueBatch([
      { name: 'mail', queue: 'asia', idempotencyKey: 'same' },
      { name: 'mail', queue: 'eu', idempotencyKey: 'same' },
    ]);
    expect(batch).toMatchObject({ count: 1, skipped: 1 });
    expect(await db.query('SELECT queue FROM sluice_jobs ORDER BY queue')).toEqual([
      { queue: 'asia' },
      { queue: 'eu' },
      { queue: 'us' },
    ]);
  });
});

describe('retention after the job finished', () => {
  it('a completed job’s key refuses duplicates for idempotencyRetentionMs; once pruned by the maintenance pass it is accepted again', async () => {
    const sluice = db.open({ idempotencyRetentionMs: 60_000 });
    const events = recordEvents(sluice);
    const mail = defineJob({ name: 'mail', handle: () => undefined });
    const { id } = await sluice.enqueue({ name: 'mail', idempotencyKey: 'k1' });
    await withWorker(sluice, [mail], {}, () =>
      waitFor(() => events['job:completed'].length === 1, { what: 'job:completed' }),
    );
    expect(await countRows(db, 'sluice_jobs')).toBe(0);

    // Retention runs from the completion, on the DB clock.
    const ahead = await msUntilExpiry('k1');
    expect(ahead).toBeGreaterThan(50_000);
    expect(ahead).toBeLessThanOrEqual(60_000);
    expect(await sluice.enqueue({ name: 'mail', idempotencyKey: 'k1' })).toEqual({ id, duplicate: true });
    expect(await countRows(db, 'sluice_jobs')).toBe(0);

    // A pass before the retention ended keeps the key.
    const maintainer = sluice.maintenance({ jitterMs: 0 });
    expect(await maintainer.runOnce()).toMatchObject({ leader: true, tasks: { pruneIdempotencyKeys: { pruned: 0 } } });
    expect(await sluice.enqueue({ name: 'mail', idempotencyKey: 'k1' })).toEqual({ id, duplicate: true });

    await db.query(
      "UPDATE sluice_idempotency_keys SET expires_at = NOW(3) - INTERVAL 1 SECOND WHERE idempotency_key = 'k1'",
    );
    expect(await maintainer.runOnce()).toMatchObject({ leader: true, tasks: { pruneIdempotencyKeys: { pruned: 1 } } });
    await maintainer.stop();
    expect(await countRows(db, 'sluice_idempotency_keys')).toBe(0);

    const again = await sluice.enqueue({ name: 'mail', idempotencyKey: 'k1' });
    expect(again.duplicate).toBe(false);
    expect(again.id).not.toBe(id);
    expect(await keyRows()).toEqual([
      expect.objectContaining({ idempotency_key: 'k1', job_id: again.id, expires_at: null }),
    ]);
  });

  it('an expired key is taken over by the next enqueue even before the maintenance pass prunes it', async () => {
    const sluice = db.open({ idempotencyRetentionMs: 60_000 });
    const events = recordEvents(sluice);
    const mail = defineJob({ name: 'mail', handle: () => undefined });
    const { id } = await sluice.enqueue({ name: 'mail', idempotencyKey: 'k2' });
    await withWorker(sluice, [mail], {}, () =>
      waitFor(() => events['job:completed'].length === 1, { what: 'job:completed' }),
    );
    await db.query(
      "UPDATE sluice_idempotency_keys SET expires_at = NOW(3) - INTERVAL 1 SECOND WHERE idempotency_key = 'k2'",
    );
    const again = await sluice.enqueue({ name: 'mail', idempotencyKey: 'k2' });
    expect(again).toEqual({ id: expect.any(Number), duplicate: false });
    expect(again.id).not.toBe(id);
    expect(await keyRows()).toEqual([
      expect.objectContaining({ idempotency_key: 'k2', job_id: again.id, expires_at: null }),
    ]);
  });

  it('a dead-lettered job’s key starts its retention too', async () => {
    const sluice = db.open({ idempotencyRetentionMs: 120_000 });
    const events = recordEvents(sluice);
    const mail = defineJob({
      name: 'mail',
      handle: () => {
        throw new PermanentJobError('bad address');
      },
    });
    const { id } = await sluice.enqueue({ name: 'mail', idempotencyKey: 'k3' });
    await withWorker(sluice, [mail], {}, () => waitFor(() => events['job:dead'].length === 1, { what: 'job:dead' }));
    const ahead = await msUntilExpiry('k3');
    expect(ahead).toBeGreaterThan(110_000);
    expect(ahead).toBeLessThanOrEqual(120_000);
    expect(await sluice.enqueue({ name: 'mail', idempotencyKey: 'k3' })).toEqual({ id, duplicate: true });
    expect(await countRows(db, 'sluice_jobs')).toBe(0);
  });

  it('the maintenance pass starts the retention of an orphaned key (its job row gone, its expiry never written)', async () => {
    const sluice = db.open({ idempotencyRetentionMs: 90_000 });
    const { id } = await sluice.enqueue({ name: 'mail', idempotencyKey: 'orphan' });
    const live = await sluice.enqueue({ name: 'mail', idempotencyKey: 'live' });
    // What a worker that crashed between deleting the job and expiring its key leaves behind.
    await db.query('DELETE FROM sluice_jobs WHERE id = ?', [id]);

    const maintainer = sluice.maintenance({ jitterMs: 0 });
    expect(await maintainer.runOnce()).toMatchObject({ leader: true, tasks: { pruneIdempotencyKeys: { pruned: 0 } } });
    const ahead = await msUntilExpiry('orphan');
    expect(ahead).toBeGreaterThan(80_000);
    expect(ahead).toBeLessThanOrEqual(90_000);
    expect((await keyRows()).find((k) => k.idempotency_key === 'live')).toMatchObject({
      job_id: live.id,
      expires_at: null,
    });
    // Still within its retention: refused.
    expect(await sluice.enqueue({ name: 'mail', idempotencyKey: 'orphan' })).toEqual({ id, duplicate: true });

    await db.query(
      "UPDATE sluice_idempotency_keys SET expires_at = NOW(3) - INTERVAL 1 SECOND WHERE idempotency_key = 'orphan'",
    );
    expect(await maintainer.runOnce()).toMatchObject({ tasks: { pruneIdempotencyKeys: { pruned: 1 } } });
    await maintainer.stop();
    expect((await sluice.enqueue({ name: 'mail', idempotencyKey: 'orphan' })).duplicate).toBe(false);
    expect((await keyRows()).map((k) => k.idempotency_key)).toEqual(['live', 'orphan']);
  });
});

describe('concurrent enqueues of the same keys', () => {
  const SCRIPT = fileURLToPath(new URL('../fixtures/scripts/enqueueKeys.ts', import.meta.url));
  const PROCESSES = 8;
  const KEYS = 1_000;

  interface Child {
    readonly process: ChildProcess;
    readonly ready: Promise<void>;
    readonly done: Promise<{ code: number | null; stdout: string; stderr: string }>;
  }

  /** One enqueuing process; `rotate` is where in the key list its batch starts (so lock orders differ). */
  function start(rotate: number): Child {
    const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT, db.url, String(KEYS), String(rotate)], {
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

  it(`${PROCESSES} processes enqueueing the same ${KEYS.toLocaleString('en')} keys at once produce exactly ${KEYS.toLocaleString('en')} jobs`, async () => {
    // Each process takes the keys in its own rotation, so the batches also collide mid-way
    // (deadlocks the enqueue transaction must survive by re-running), not only at their first key.
    const children = Array.from({ length: PROCESSES }, (_, i) => start((i * KEYS) / PROCESSES));
    try {
      await Promise.all(children.map((c) => c.ready));
      for (const c of children) c.process.stdin?.write('go\n');
      const outcomes = await Promise.all(children.map((c) => c.done));

      for (const o of outcomes) expect(o, o.stderr).toMatchObject({ code: 0 });
      const results = outcomes.map(
        (o) =>
          JSON.parse(o.stdout.trim().split('\n').pop() as string) as {
            batchId: number | null;
            count: number;
            skipped: number;
          },
      );
      expect(results.reduce((sum, r) => sum + r.count, 0)).toBe(KEYS);
      expect(results.reduce((sum, r) => sum + r.skipped, 0)).toBe((PROCESSES - 1) * KEYS);

      expect(await countRows(db, 'sluice_jobs')).toBe(KEYS);
      expect(await countRows(db, 'sluice_jobs', 'queue = ?', ['keys'])).toBe(KEYS);
      const [distinct] = await db.query<{ n: number }>('SELECT COUNT(DISTINCT idempotency_key) AS n FROM sluice_jobs');
      expect(Number(distinct?.n)).toBe(KEYS);
      // Every key points at the job that carries it, and each job was written by the process whose count says so.
      expect(await countRows(db, 'sluice_idempotency_keys')).toBe(KEYS);
      const [linked] = await db.query<{ n: number }>(
        `SELECT COUNT(*) AS n FROM sluice_idempotency_keys k
         JOIN sluice_jobs j ON j.id = k.job_id AND j.queue = k.queue AND j.idempotency_key = k.idempotency_key`,
      );
      expect(Number(linked?.n)).toBe(KEYS);
      const perBatch = await db.query<{ batch_id: number; n: number }>(
        'SELECT batch_id, COUNT(*) AS n FROM sluice_jobs GROUP BY batch_id',
      );
      const written = new Map(perBatch.map((r) => [Number(r.batch_id), Number(r.n)]));
      for (const r of results) {
        if (r.count === 0) expect(r.batchId).toBeNull();
        else expect(written.get(r.batchId as number)).toBe(r.count);
      }
    } finally {
      for (const c of children)
        if (c.process.exitCode === null && c.process.signalCode === null) c.process.kill('SIGKILL');
    }
  });
});
