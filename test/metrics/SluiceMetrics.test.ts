import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { defineJob, type LoadReading, SluiceMetrics } from '../../src/index.ts';
import { ago, fromNow, insertJob } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';

/**
 * docs/operating.md "Metrics": Prometheus text format read from the database in a fixed number of
 * statements: queue depth by state, oldest ready age and dead jobs as the maintenance leader last
 * read them, the worker count, and per worker its gauges and what it counted (jobs per queue, name
 * and outcome, claims, attempt durations, start latencies), carried by its heartbeat.
 */
const db = useTestDatabase('ops_metrics');

interface Sample {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}

/** Parses the sample lines of a Prometheus text exposition (comments skipped). */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a Prometheus sample line: ${JSON.stringify(line)}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[key as string] = value as string;
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The value of the one sample with exactly these labels, or undefined. */
function sampleValue(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples.filter(
    (s) =>
      s.name === name &&
      Object.keys(s.labels).length === Object.keys(labels).length &&
      Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} ${JSON.stringify(labels)}`);
  return found[0]?.value;
}

const CALM: LoadReading = { cpu: 0.1, freeMem: 0.8 };

describe('metrics', () => {
  it('render() and GET /metrics reflect queue depth by state, oldest ready age, dead jobs, the fleet and per-worker per-queue counters', async () => {
    const sluice = db.open();
    // Queue m, put into each state directly.
    await insertJob(db, { queue: 'm', runAt: ago(90_000) });
    await insertJob(db, { queue: 'm' });
    for (let i = 0; i < 3; i++) await insertJob(db, { queue: 'm', runAt: fromNow(3_600_000) });
    await insertJob(db, { queue: 'm', lockId: 'elsewhere-1~abc.1' });
    await db.query(
      `INSERT INTO sluice_dead_jobs (id, queue, name, payload, priority, retry_times, created_at, failed_at, redriven_at, redriven_as)
       VALUES (9001, 'm', 'x', '{}', 0, 1, NOW(3), NOW(3), NULL, NULL), (9002, 'm', 'x', '{}', 0, 1, NOW(3), NOW(3), NOW(3), 1)`,
    );

    // Queue w, through a real worker: 3 completions, 1 job dead on its first failure, 1 that fails once then completes, 1 still running.
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    const jobs = [
      defineJob({ name: 'ok', handle: () => undefined }),
      defineJob({
        name: 'bad',
        maxRetries: 0,
        handle: () => {
          throw new Error('bad on purpose');
        },
      }),
      defineJob({
        name: 'flaky',
        backoff: { type: 'fixed', delayMs: 1 },
        handle: (_p, ctx) => {
          if (ctx.job.retryTimes === 0) throw new Error('first attempt fails');
        },
      }),
      defineJob({ name: 'hold', handle: () => gate }),
    ];
    await sluice.enqueueBatch(['ok', 'ok', 'ok', 'bad', 'flaky', 'hold'].map((name) => ({ name, queue: 'w' })));
    // A job due in an hour keeps the worker claiming queue w, so empty claim rounds come however
    // fast the others finish (a queue with nothing waiting at all is not claimed, and not counted).
    await sluice.enqueue({ name: 'ok', queue: 'w', delayMs: 3_600_000 });
    const worker = sluice.worker({
      queues: ['w'],
      concurrency: 4,
      jobs,
      heartbeatIntervalMs: 100,
      lockTimeoutMs: 10_000,
      pollIntervalMs: 20,
      maxPollIntervalMs: 100,
      loadSampler: async () => CALM,
      metricsIntervalMs: 0,
    });
    const metrics = new SluiceMetrics(sluice, 0);
    const maintenance = sluice.maintenance({ jitterMs: 0 });
    const pass = async () => expect((await maintenance.runOnce()).leader).toBe(true);
    await worker.start();
    try {
      await waitFor(
        async () => {
          const [w] = await sluice.workers.list();
          const c = w?.counters.w;
          return w?.inFlight === 1 && c?.completed === 4 && c.failed === 2 && c.dead === 1;
        },
        { what: 'a heartbeat with the worker’s totals' },
      );
      await waitFor(
        async () => {
          const [w] = await sluice.workers.list({ metrics: true });
          const q = w?.metrics?.queues.w;
          // An empty claim round comes when the worker next looks and finds nothing due: wait for one.
          return q?.names.ok?.completed === 3 && q.names.hold?.claimed === 1 && q.emptyClaims > 0;
        },
        { what: 'a heartbeat with the worker’s metrics' },
      );
      await pass();
      const labels = { worker: worker.name, host: hostname().slice(0, 64) };
      expect(worker.name).toBe(`pid-${process.pid}`);

      const text = await metrics.render();
      const samples = parseExposition(text);
      expect(text).toContain('# TYPE sluice_jobs gauge');
      expect(text).toContain('# HELP sluice_jobs ');
      expect(sampleValue(samples, 'sluice_jobs', { queue: 'm', state: 'ready' })).toBe(2);
      expect(sampleValue(samples, 'sluice_jobs', { queue: 'm', state: 'delayed' })).toBe(3);
      expect(sampleValue(samples, 'sluice_jobs', { queue: 'm', state: 'running' })).toBe(1);
      expect(sampleValue(samples, 'sluice_jobs', { queue: 'w', state: 'ready' })).toBe(0);
      expect(sampleValue(samples, 'sluice_jobs', { queue: 'w', state: 'running' })).toBe(1);
      const oldest = sampleValue(samples, 'sluice_queue_oldest_ready_seconds', { queue: 'm' }) as number;
      expect(sampleValue(samples, 'sluice_oldest_ready_seconds', { queue: 'm' }), 'the deprecated name').toBe(oldest);
      expect(oldest).toBeGreaterThanOrEqual(90);
      expect(oldest).toBeLessThan(150);
      expect(sampleValue(samples, 'sluice_queue_oldest_ready_seconds', { queue: 'w' })).toBe(0);
      expect(sampleValue(samples, 'sluice_dead_jobs', { queue: 'm' })).toBe(1); // the re-driven one is history
      expect(sampleValue(samples, 'sluice_dead_jobs', { queue: 'w' })).toBe(1);
      expect(sampleValue(samples, 'sluice_workers')).toBe(1);
      expect(sampleValue(samples, 'sluice_worker_in_flight', labels)).toBe(1);
      expect(sampleValue(samples, 'sluice_worker_concurrency_limit', labels)).toBe(4);
      expect(sampleValue(samples, 'sluice_worker_claim_latency_seconds', labels)).toBeGreaterThan(0);
      expect(sampleValue(samples, 'sluice_worker_jobs_total', { ...labels, queue: 'w', outcome: 'completed' })).toBe(4);
      expect(sampleValue(samples, 'sluice_worker_jobs_total', { ...labels, queue: 'w', outcome: 'failed' })).toBe(2);
      expect(sampleValue(samples, 'sluice_worker_jobs_total', { ...labels, queue: 'w', outcome: 'dead' })).toBe(1);
      const outcome = (name: string, outcome: string) =>
        sampleValue(samples, 'sluice_job_outcomes_total', { ...labels, queue: 'w', name, outcome });
      expect([
        outcome('ok', 'completed'),
        outcome('ok', 'failed'),
        outcome('bad', 'failed'),
        outcome('bad', 'dead'),
      ]).toEqual([3, 0, 1, 1]);
      expect([outcome('flaky', 'failed'), outcome('flaky', 'retried'), outcome('flaky', 'completed')]).toEqual([
        1, 1, 1,
      ]);
      expect(outcome('hold', 'completed')).toBe(0);
      expect(sampleValue(samples, 'sluice_jobs_claimed_total', { ...labels, queue: 'w', name: 'flaky' })).toBe(2);
      expect(sampleValue(samples, 'sluice_jobs_claimed_total', { ...labels, queue: 'w', name: 'hold' })).toBe(1);
      expect(sampleValue(samples, 'sluice_claims_total', { ...labels, queue: 'w', result: 'claimed' })).toBeGreaterThan(
        0,
      );
      expect(sampleValue(samples, 'sluice_claims_total', { ...labels, queue: 'w', result: 'empty' })).toBeGreaterThan(
        0,
      );
      // Histograms: cumulative buckets, +Inf = count; every attempt that ran and every claimed job observed.
      const attempts = { ...labels, queue: 'w', name: 'flaky' };
      expect(sampleValue(samples, 'sluice_job_attempt_duration_seconds_count', attempts)).toBe(2);
      expect(sampleValue(samples, 'sluice_job_attempt_duration_seconds_bucket', { ...attempts, le: '+Inf' })).toBe(2);
      expect(sampleValue(samples, 'sluice_job_attempt_duration_seconds_sum', attempts)).toBeGreaterThan(0);
      const le = samples
        .filter((s) => s.name === 'sluice_job_attempt_duration_seconds_bucket' && s.labels.name === 'flaky')
        .map((s) => s.value);
      expect(le).toEqual([...le].sort((a, b) => a - b));
      expect(sampleValue(samples, 'sluice_job_start_latency_seconds_count', { ...labels, queue: 'w' })).toBe(7);
      expect(text).toMatch(/^# TYPE sluice_job_start_latency_seconds histogram$/m);
      expect(sampleValue(samples, 'sluice_worker_concurrency', labels)).toBe(4);
      expect(sampleValue(samples, 'sluice_worker_host_cpu_ratio', labels)).toBe(0.1);
      expect(sampleValue(samples, 'sluice_worker_resident_memory_bytes', labels)).toBeGreaterThan(1_000_000);
      expect(sampleValue(samples, 'sluice_worker_heartbeat_age_seconds', labels)).toBeGreaterThanOrEqual(0);
      expect(sampleValue(samples, 'sluice_queue_depth_age_seconds', { queue: 'm' })).toBeGreaterThanOrEqual(0);

      // The same over HTTP.
      const server = await metrics.listen(0, '127.0.0.1');
      try {
        const { port } = server.address() as AddressInfo;
        const response = await fetch(`http://127.0.0.1:${port}/metrics`);
        expect(response.status).toBe(200);
        expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4; charset=utf-8$/);
        const body = await response.text();
        expect(body).toMatch(/^# HELP sluice_workers Live workers in the registry\.$/m);
        expect(body).toMatch(/^# TYPE sluice_workers gauge$/m);
        expect(body).toMatch(/^# TYPE sluice_worker_jobs_total counter$/m);
        expect(body).toMatch(/^sluice_workers 1$/m);
        expect(body).toMatch(/^sluice_jobs\{queue="m",state="delayed"\} 3$/m);
        const overHttp = parseExposition(body);
        expect(sampleValue(overHttp, 'sluice_worker_jobs_total', { ...labels, queue: 'w', outcome: 'completed' })).toBe(
          4,
        );
        expect(overHttp.some((s) => s.name.startsWith('sluice_metrics_process_'))).toBe(true);
        const elsewhere = await fetch(`http://127.0.0.1:${port}/`);
        expect(elsewhere.status).toBe(404);
        await elsewhere.text();
      } finally {
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
      openGate();
    } finally {
      openGate();
      await worker.stop();
    }

    // Each scrape reads afresh: the stopped worker and its series are gone, w is drained.
    await pass();
    await maintenance.stop();
    const after = parseExposition(await metrics.render());
    expect(sampleValue(after, 'sluice_workers')).toBe(0);
    expect(after.filter((s) => s.name.startsWith('sluice_worker_'))).toEqual([]);
    expect(sampleValue(after, 'sluice_jobs', { queue: 'w', state: 'running' })).toBe(0);
    expect(sampleValue(after, 'sluice_jobs', { queue: 'm', state: 'ready' })).toBe(2);
  });

  it('sluice_jobs_unknown_to_workers names a job no live worker knows, until one that knows it starts', async () => {
    const sluice = db.open();
    await sluice.enqueue({ name: 'ghost', queue: 'u' });
    const metrics = new SluiceMetrics(sluice, 0);
    const unknown = async () =>
      parseExposition(await metrics.render()).filter((s) => s.name === 'sluice_jobs_unknown_to_workers');
    const options = {
      queues: ['u'],
      heartbeatIntervalMs: 100,
      maxPollIntervalMs: 60_000,
      loadSampler: async () => CALM,
    };
    const old = sluice.worker({ ...options, jobs: [defineJob({ name: 'other', handle: () => undefined })] });
    await old.start();
    try {
      await waitFor(async () => (await unknown()).length > 0, { what: 'the unknown job in the metrics' });
      expect(await unknown()).toEqual([
        { name: 'sluice_jobs_unknown_to_workers', labels: { queue: 'u', name: 'ghost' }, value: 1 },
      ]);
      // A worker that knows it is live: the name is no longer unknown to the fleet.
      const current = sluice.worker({ ...options, jobs: [defineJob({ name: 'ghost', handle: () => undefined })] });
      await current.start();
      try {
        expect(await unknown()).toEqual([]);
      } finally {
        await current.stop();
      }
    } finally {
      await old.stop();
    }
  });
});
