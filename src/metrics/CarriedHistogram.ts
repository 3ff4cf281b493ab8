import { Histogram, type MetricType, type Registry } from 'prom-client';
import type { HistogramCounts } from '../worker/metricsSnapshot.ts';

interface Series {
  readonly labels: Record<string, string>;
  readonly buckets: number[];
  sumSeconds: number;
  count: number;
}

/**
 * A Prometheus histogram whose observations were counted elsewhere — by the workers, in fixed
 * buckets carried by their registry rows — and are added, not observed, at each scrape: add()
 * sums the counts of one label set (two rows with the same labels, a worker restarted under its
 * name while the old process drains, add up), reset() empties it. The exposition is the standard
 * one: cumulative `_bucket{le}` lines, `+Inf`, `_sum` and `_count`.
 */
export class CarriedHistogram<L extends string> extends Histogram<L> {
  private carried = new Map<string, Series>();
  private readonly bounds: readonly number[];
  private readonly metricName: string;
  private readonly metricHelp: string;

  constructor(config: { name: string; help: string; labelNames: L[]; buckets: readonly number[]; registry: Registry }) {
    super({
      name: config.name,
      help: config.help,
      labelNames: config.labelNames,
      buckets: [...config.buckets],
      registers: [config.registry],
    });
    this.bounds = config.buckets;
    this.metricName = config.name;
    this.metricHelp = config.help;
  }

  /** Adds a worker's counts (one bucket per bound and a last one past them, as carried) to the series of `labels`. */
  add(labels: Record<L, string>, counts: HistogramCounts): void {
    const key = JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1)));
    let series = this.carried.get(key);
    if (!series) {
      series = { labels, buckets: new Array<number>(this.bounds.length + 1).fill(0), sumSeconds: 0, count: 0 };
      this.carried.set(key, series);
    }
    for (let i = 0; i <= this.bounds.length; i++)
      series.buckets[i] = (series.buckets[i] ?? 0) + (counts.buckets[i] ?? 0);
    series.sumSeconds += counts.sumSeconds;
    series.count += counts.count;
  }

  override reset(): void {
    super.reset();
    this.carried?.clear();
  }

  override async get(): ReturnType<Histogram<L>['get']> {
    return this.getForPromString();
  }

  /** What the registry renders (prom-client asks for this first). */
  async getForPromString(): ReturnType<Histogram<L>['get']> {
    // prom-client's types leave out a histogram's own `le` label; its exposition has it.
    type Value = Awaited<ReturnType<Histogram<L>['get']>>['values'][number];
    const values: Value[] = [];
    const push = (labels: Record<string, string | number>, value: number, metricName: string) =>
      values.push({ labels: labels as Value['labels'], value, metricName });
    const name = this.metricName;
    for (const { labels, buckets, sumSeconds, count } of this.carried.values()) {
      let cumulative = 0;
      this.bounds.forEach((bound, i) => {
        cumulative += buckets[i] ?? 0;
        push({ ...labels, le: bound }, cumulative, `${name}_bucket`);
      });
      push({ ...labels, le: '+Inf' }, count, `${name}_bucket`);
      push(labels, sumSeconds, `${name}_sum`);
      push(labels, count, `${name}_count`);
    }
    return {
      name,
      help: this.metricHelp,
      // The registry prints `type` as is; prom-client's types declare a numeric enum it never uses.
      type: 'histogram' as unknown as MetricType,
      values,
      aggregator: 'sum',
      collect: () => undefined,
    };
  }
}
