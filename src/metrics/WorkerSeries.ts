import { Counter, Gauge, type Registry } from 'prom-client';
import { jobsUnknownToWorkers } from '../worker/jobsUnknownToWorkers.ts';
import { ATTEMPT_DURATION_BUCKETS_S, START_LATENCY_BUCKETS_S, type WorkerMetrics } from '../worker/metricsSnapshot.ts';
import type { WorkerInfo } from '../worker/workerRegistry.ts';
import { CarriedHistogram } from './CarriedHistogram.ts';

type W = 'worker' | 'host';

const OUTCOMES = ['completed', 'failed', 'retried', 'dead', 'cancelled'] as const;

/**
 * The series of each live worker, from its registry row (`sluice.workers.list({ metrics: true })`):
 * its gauges (in flight, limits, claim latency, heartbeat age, host load, memory, event-loop stall)
 * and what it counted since it started — jobs per queue, name and outcome, claim round trips,
 * attempt durations and start latencies. Counters and histograms reset when a worker restarts, as
 * Prometheus expects of a process's counters: `rate()` and `increase()` handle it, and summing
 * per-worker series in PromQL (never here) keeps a worker that leaves from looking like a reset of
 * the whole fleet. Workers are labelled by their stable name and host.
 */
export class WorkerSeries {
  readonly #workers: Gauge;
  readonly #gauges: Record<
    'inFlight' | 'limit' | 'concurrency' | 'latency' | 'age' | 'cpu' | 'freeMem' | 'rss' | 'loop',
    Gauge<W>
  >;
  readonly #legacyOutcomes: Counter<W | 'queue' | 'outcome'>;
  readonly #outcomes: Counter<W | 'queue' | 'name' | 'outcome'>;
  readonly #claimed: Counter<W | 'queue' | 'name'>;
  readonly #claims: Counter<W | 'queue' | 'result'>;
  readonly #duration: CarriedHistogram<W | 'queue' | 'name'>;
  readonly #latency: CarriedHistogram<W | 'queue'>;
  readonly #unknown: Gauge<'queue' | 'name'>;

  constructor(registry: Registry) {
    const registers = [registry];
    const gauge = (name: string, help: string) =>
      new Gauge<W>({ name, help, labelNames: ['worker', 'host'], registers });
    this.#workers = new Gauge({ name: 'sluice_workers', help: 'Live workers in the registry.', registers });
    this.#gauges = {
      inFlight: gauge('sluice_worker_in_flight', 'Jobs running per worker.'),
      limit: gauge('sluice_worker_concurrency_limit', 'Load-aware concurrency limit per worker.'),
      concurrency: gauge('sluice_worker_concurrency', 'Configured concurrency (most jobs at once) per worker.'),
      latency: gauge('sluice_worker_claim_latency_seconds', 'Claim round-trip latency per worker (moving average).'),
      age: gauge('sluice_worker_heartbeat_age_seconds', 'Time since the worker’s last heartbeat (DB clock).'),
      cpu: gauge('sluice_worker_host_cpu_ratio', 'CPU busy fraction of the worker’s host, as the worker sampled it.'),
      freeMem: gauge('sluice_worker_host_free_memory_ratio', 'Free memory fraction of the worker’s host.'),
      rss: gauge('sluice_worker_resident_memory_bytes', 'Resident memory of the worker process, as last sent.'),
      loop: gauge(
        'sluice_worker_event_loop_delay_max_seconds',
        'Longest event-loop stall of the worker process in the interval before its last send.',
      ),
    };
    this.#legacyOutcomes = new Counter({
      name: 'sluice_worker_jobs_total',
      help: 'Deprecated (use sluice_job_outcomes_total): jobs per worker, queue and outcome (completed, failed, dead, cancelled) since the worker (re)started.',
      labelNames: ['worker', 'host', 'queue', 'outcome'],
      registers,
    });
    this.#outcomes = new Counter({
      name: 'sluice_job_outcomes_total',
      help: 'Outcomes per worker, queue and job name since the worker (re)started: completed, failed (attempts), retried, dead, cancelled.',
      labelNames: ['worker', 'host', 'queue', 'name', 'outcome'],
      registers,
    });
    this.#claimed = new Counter({
      name: 'sluice_jobs_claimed_total',
      help: 'Jobs claimed (attempts started) per worker, queue and job name since the worker (re)started.',
      labelNames: ['worker', 'host', 'queue', 'name'],
      registers,
    });
    this.#claims = new Counter({
      name: 'sluice_claims_total',
      help: 'Claim round trips per worker and queue since the worker (re)started, by whether they claimed any job.',
      labelNames: ['worker', 'host', 'queue', 'result'],
      registers,
    });
    this.#duration = new CarriedHistogram({
      name: 'sluice_job_attempt_duration_seconds',
      help: 'Attempt duration, claim to outcome (completed, failed and cancelled attempts), per worker, queue and job name.',
      labelNames: ['worker', 'host', 'queue', 'name'],
      buckets: ATTEMPT_DURATION_BUCKETS_S,
      registry,
    });
    this.#latency = new CarriedHistogram({
      name: 'sluice_job_start_latency_seconds',
      help: 'Enqueue-to-start latency: from when a job was due (its enqueue, its runAt, its retry) to its claim, per worker and queue.',
      labelNames: ['worker', 'host', 'queue'],
      buckets: START_LATENCY_BUCKETS_S,
      registry,
    });
    this.#unknown = new Gauge({
      name: 'sluice_jobs_unknown_to_workers',
      help: 'Job names that live workers claimed and gave back for want of a handler, and that no live worker knows (their jobs wait for a worker with their code), per queue and name: the workers that gave them back.',
      labelNames: ['queue', 'name'],
      registers,
    });
  }

  set(workers: readonly WorkerInfo[]): void {
    for (const metric of [
      ...Object.values(this.#gauges),
      this.#legacyOutcomes,
      this.#outcomes,
      this.#claimed,
      this.#claims,
      this.#duration,
      this.#latency,
      this.#unknown,
    ])
      metric.reset();
    this.#workers.set(workers.length);
    for (const u of jobsUnknownToWorkers(workers)) {
      for (const queue of u.queues) this.#unknown.set({ queue, name: u.name }, u.workers);
    }
    for (const w of workers) {
      const labels = { worker: w.name, host: w.host };
      const g = this.#gauges;
      g.inFlight.set(labels, w.inFlight);
      g.limit.set(labels, w.concurrencyLimit);
      g.concurrency.set(labels, w.concurrency);
      g.age.set(labels, w.heartbeatAgeMs / 1000);
      if (w.claimLatencyMs !== null) g.latency.set(labels, w.claimLatencyMs / 1000);
      if (w.cpu !== null) g.cpu.set(labels, w.cpu);
      if (w.freeMem !== null) g.freeMem.set(labels, w.freeMem);
      for (const [queue, c] of Object.entries(w.counters)) {
        for (const outcome of ['completed', 'failed', 'dead', 'cancelled'] as const)
          this.#legacyOutcomes.inc({ ...labels, queue, outcome }, c[outcome] ?? 0);
      }
      if (w.metrics) this.#carried(labels, w.metrics);
    }
  }

  #carried(labels: Record<W, string>, metrics: WorkerMetrics): void {
    this.#gauges.rss.set(labels, metrics.residentMemoryBytes);
    this.#gauges.loop.set(labels, metrics.eventLoopDelayMaxMs / 1000);
    for (const [queue, q] of Object.entries(metrics.queues)) {
      this.#claims.inc({ ...labels, queue, result: 'claimed' }, q.claims - q.emptyClaims);
      this.#claims.inc({ ...labels, queue, result: 'empty' }, q.emptyClaims);
      this.#latency.add({ ...labels, queue }, q.startLatency);
      for (const [name, n] of Object.entries(q.names)) {
        this.#claimed.inc({ ...labels, queue, name }, n.claimed);
        for (const outcome of OUTCOMES) this.#outcomes.inc({ ...labels, queue, name, outcome }, n[outcome]);
        this.#duration.add({ ...labels, queue, name }, n.attemptDuration);
      }
    }
  }
}
