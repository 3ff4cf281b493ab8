import { createServer, type Server } from 'node:http';
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import { RECORDED_QUEUES_DEFAULT } from '../api/queuesApi.ts';
import type { SluiceApi } from '../api/SluiceApi.ts';
import { errorFields } from '../errorText.ts';
import { MAX_LIMITED_QUEUES } from '../queues/queueLimits.ts';
import { MAX_PROMISES } from '../queues/queuePromises.ts';
import { LimitSeries } from './LimitSeries.ts';
import { QueueSeries } from './QueueSeries.ts';
import { WorkerSeries } from './WorkerSeries.ts';

/**
 * The statements one reading of the database takes, whatever the number of queues, jobs or workers
 * (one fewer when no queue is limited: no running jobs to count).
 */
export const STATEMENTS_PER_SCRAPE = 5;

/**
 * Prometheus text-format metrics for one sluice install (docs/operating.md "Metrics" lists them),
 * read from the database in STATEMENTS_PER_SCRAPE statements, whatever the size of the tables:
 * - the queues' depth as the maintenance leader last read it (queue_depths: it reads every queue
 *   with bounded index reads once per pass), and the queues' latency promises with their state;
 * - the limited queues' caps and rates, their use, and whether each holds its jobs back now (two
 *   statements: their rows, then their running jobs over the claimed entries of the jobs index);
 * - the fleet from the worker registry: per worker its gauges, and the counters and histograms it
 *   counted since it started (jobs per queue, name and outcome, claims, attempt durations, start
 *   latencies), which its heartbeat carries into its row every metricsIntervalMs.
 * Workers are labelled by their stable name, not their per-process id, so a restarted worker
 * continues its series.
 */
export class SluiceMetrics {
  readonly registry = new Registry();
  readonly #queues = new QueueSeries(this.registry);
  readonly #workers = new WorkerSeries(this.registry);
  readonly #limits = new LimitSeries(this.registry);
  readonly #cut = new Gauge({
    name: 'sluice_metrics_cut',
    help: 'Whether a read of the scrape returned its most rows (1): depths 2,000 queues, promises 1,000, limits 1,000 in name order; the queues past them have no series of that read.',
    labelNames: ['read'],
    registers: [this.registry],
  });
  /** The last rendering, and when it was made: scrapes within cacheMs share it (and one rendering in progress). */
  #cached: { text: Promise<string>; at: number } | null = null;

  /** The metrics of the install `sluice` reaches; serve them with `listen(port)` or `render()` in your own server. */
  constructor(
    private readonly sluice: SluiceApi,
    /** How long one reading of the database answers every scrape. @defaultValue 5,000 */
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
    const [depths, promises, workers, limits] = await Promise.all([
      this.sluice.queues.recordedDepth(),
      this.sluice.queues.promises(),
      this.sluice.workers.list({ metrics: true }),
      this.sluice.queues.limits(),
    ]);
    this.#queues.set(depths, promises);
    this.#limits.set(limits);
    this.#workers.set(workers);
    // A read that returned its most rows may have left queues out: say so rather than drop them.
    this.#cut.set({ read: 'depths' }, depths.length >= RECORDED_QUEUES_DEFAULT ? 1 : 0);
    this.#cut.set({ read: 'promises' }, promises.length >= MAX_PROMISES ? 1 : 0);
    this.#cut.set({ read: 'limits' }, limits.length >= MAX_LIMITED_QUEUES ? 1 : 0);
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
}
