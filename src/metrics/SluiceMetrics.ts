import { createServer, type Server } from 'node:http';
import { Counter, collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { SluiceApi } from '../api/SluiceApi.ts';
import { errorFields } from '../errorText.ts';

/**
 * Prometheus text-format metrics for one sluice install, read from the database at each scrape:
 * queue depth by state, oldest ready age and dead jobs per queue (queueStats), and the fleet from
 * the worker registry — worker count, in-flight, claim latency, and per-queue completed / failed /
 * dead / cancelled totals per worker (counters that reset when a worker restarts, as Prometheus expects).
 * Workers are labelled by their stable name, not their per-process id, so a restarted worker
 * continues its series.
 */
export class SluiceMetrics {
  readonly registry = new Registry();
  readonly #jobs = this.#gauge('sluice_jobs', 'Live jobs by queue and state (ready, delayed, running).', [
    'queue',
    'state',
  ]);
  readonly #dead = this.#gauge('sluice_dead_jobs', 'Dead jobs (not re-driven) by queue.', ['queue']);
  readonly #oldest = this.#gauge('sluice_oldest_ready_seconds', 'Age of the oldest ready job by queue.', ['queue']);
  readonly #workers = this.#gauge('sluice_workers', 'Live workers in the registry.', []);
  readonly #inFlight = this.#gauge('sluice_worker_in_flight', 'Jobs running per worker.', ['worker', 'host']);
  readonly #limit = this.#gauge('sluice_worker_concurrency_limit', 'Load-aware concurrency limit per worker.', [
    'worker',
    'host',
  ]);
  readonly #latency = this.#gauge(
    'sluice_worker_claim_latency_seconds',
    'Claim round-trip latency per worker (moving average).',
    ['worker', 'host'],
  );
  readonly #outcomes = new Counter({
    name: 'sluice_worker_jobs_total',
    help: 'Jobs per worker, queue and outcome (completed, failed, dead, cancelled) since the worker (re)started: a counter that resets with it.',
    labelNames: ['worker', 'host', 'queue', 'outcome'],
    registers: [this.registry],
  });
  /** The last rendering, and when it was made: scrapes within cacheMs share it (and one rendering in progress). */
  #cached: { text: Promise<string>; at: number } | null = null;

  constructor(
    private readonly sluice: SluiceApi,
    /** How long one reading of the database answers every scrape: it counts the live table per queue. @defaultValue 5,000 */
    private readonly cacheMs = 5_000,
  ) {
    collectDefaultMetrics({ register: this.registry, prefix: 'sluice_metrics_process_' });
  }

  /** The exposition text: read from the database at most once per cacheMs, however many scrape. */
  render(): Promise<string> {
    const now = Date.now();
    if (this.#cached && now - this.#cached.at < this.cacheMs) return this.#cached.text;
    const text = this.#read();
    this.#cached = { text, at: now };
    text.catch(() => {
      if (this.#cached?.text === text) this.#cached = null;
    });
    return text;
  }

  async #read(): Promise<string> {
    const [stats, workers] = await Promise.all([this.sluice.queues.depth(), this.sluice.workers.list()]);
    for (const gauge of [
      this.#jobs,
      this.#dead,
      this.#oldest,
      this.#inFlight,
      this.#limit,
      this.#latency,
      this.#outcomes,
    ])
      gauge.reset();
    for (const s of stats) {
      this.#jobs.set({ queue: s.queue, state: 'ready' }, s.ready.count);
      this.#jobs.set({ queue: s.queue, state: 'delayed' }, s.notDue.count);
      this.#jobs.set({ queue: s.queue, state: 'running' }, s.running.count);
      this.#dead.set({ queue: s.queue }, s.dead.count);
      this.#oldest.set({ queue: s.queue }, s.oldestReadyMs === null ? 0 : s.oldestReadyMs / 1000);
    }
    this.#workers.set(workers.length);
    for (const w of workers) {
      const labels = { worker: w.name, host: w.host };
      this.#inFlight.set(labels, w.inFlight);
      this.#limit.set(labels, w.concurrencyLimit);
      if (w.claimLatencyMs !== null) this.#latency.set(labels, w.claimLatencyMs / 1000);
      for (const [queue, c] of Object.entries(w.counters)) {
        for (const outcome of ['completed', 'failed', 'dead', 'cancelled'] as const)
          this.#outcomes.inc({ ...labels, queue, outcome }, c[outcome] ?? 0);
      }
    }
    return this.registry.metrics();
  }

  /**
   * Serves GET /metrics on `port` (0 picks a free one), on loopback unless told otherwise. A
   * failed reading answers a generic 500 and is logged: the page never shows a host, user,
   * database or URL.
   */
  listen(port: number, host = '127.0.0.1'): Promise<Server> {
    const server = createServer((req, res) => {
      if (req.url !== '/metrics') {
        res.writeHead(404).end('see /metrics\n');
        return;
      }
      this.render().then(
        (text) => res.writeHead(200, { 'Content-Type': this.registry.contentType }).end(text),
        (error: unknown) => {
          this.sluice.logger.error(
            { event: 'metrics:failed', err: errorFields(error) },
            'metrics: reading the database failed',
          );
          res
            .writeHead(500, { 'Content-Type': 'text/plain' })
            .end('sluice metrics: the database could not be read; see the log\n');
        },
      );
    });
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve(server));
    });
  }

  #gauge<L extends string>(name: string, help: string, labelNames: L[]): Gauge<L> {
    return new Gauge({ name, help, labelNames, registers: [this.registry] });
  }
}
