import { createServer, type Server } from 'node:http';
import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { Sluice } from '../Sluice.ts';

/**
 * Prometheus text-format metrics for one sluice install, read from the database at each scrape:
 * queue depth by state, oldest ready age and dead jobs per queue (queueStats), and the fleet from
 * the worker registry — worker count, in-flight, claim latency, and per-queue completed / failed /
 * dead totals per worker (counters that reset when a worker restarts, as Prometheus expects).
 */
export class SluiceMetrics {
  readonly registry = new Registry();
  readonly #jobs = this.#gauge('sluice_jobs', 'Live jobs by queue and state (ready, delayed, running).', ['queue', 'state']);
  readonly #dead = this.#gauge('sluice_dead_jobs', 'Dead jobs (not re-driven) by queue.', ['queue']);
  readonly #oldest = this.#gauge('sluice_oldest_ready_seconds', 'Age of the oldest ready job by queue.', ['queue']);
  readonly #workers = this.#gauge('sluice_workers', 'Live workers in the registry.', []);
  readonly #inFlight = this.#gauge('sluice_worker_in_flight', 'Jobs running per worker.', ['worker', 'host']);
  readonly #limit = this.#gauge('sluice_worker_concurrency_limit', 'Load-aware concurrency limit per worker.', ['worker', 'host']);
  readonly #latency = this.#gauge('sluice_worker_claim_latency_seconds', 'Claim round-trip latency per worker (moving average).', ['worker', 'host']);
  readonly #outcomes = this.#gauge('sluice_worker_jobs_total', 'Jobs per worker, queue and outcome (completed, failed, dead) since the worker started.', [
    'worker',
    'host',
    'queue',
    'outcome',
  ]);

  constructor(private readonly sluice: Sluice) {
    collectDefaultMetrics({ register: this.registry, prefix: 'sluice_metrics_process_' });
  }

  /** Reads the database and returns the exposition text. */
  async render(): Promise<string> {
    const [stats, workers] = await Promise.all([this.sluice.stats(), this.sluice.workers()]);
    for (const gauge of [this.#jobs, this.#dead, this.#oldest, this.#inFlight, this.#limit, this.#latency, this.#outcomes]) gauge.reset();
    for (const s of stats) {
      this.#jobs.set({ queue: s.queue, state: 'ready' }, s.ready);
      this.#jobs.set({ queue: s.queue, state: 'delayed' }, s.delayed);
      this.#jobs.set({ queue: s.queue, state: 'running' }, s.running);
      this.#dead.set({ queue: s.queue }, s.dead);
      this.#oldest.set({ queue: s.queue }, s.oldestReadyMs === null ? 0 : s.oldestReadyMs / 1000);
    }
    this.#workers.set(workers.length);
    for (const w of workers) {
      const labels = { worker: w.id, host: w.host };
      this.#inFlight.set(labels, w.inFlight);
      this.#limit.set(labels, w.concurrencyLimit);
      if (w.claimLatencyMs !== null) this.#latency.set(labels, w.claimLatencyMs / 1000);
      for (const [queue, c] of Object.entries(w.counters)) {
        for (const outcome of ['completed', 'failed', 'dead'] as const) this.#outcomes.set({ ...labels, queue, outcome }, c[outcome]);
      }
    }
    return this.registry.metrics();
  }

  /** Serves GET /metrics on `port` (0 picks a free one). */
  listen(port: number, host = '0.0.0.0'): Promise<Server> {
    const server = createServer((req, res) => {
      if (req.url !== '/metrics') {
        res.writeHead(404).end('see /metrics\n');
        return;
      }
      this.render().then(
        (text) => res.writeHead(200, { 'Content-Type': this.registry.contentType }).end(text),
        (error: Error) => res.writeHead(500, { 'Content-Type': 'text/plain' }).end(`sluice metrics: ${error.message}\n`),
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
