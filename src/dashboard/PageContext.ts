import type { BatchStatus } from '../batches/getBatch.ts';
import type { Throughput } from '../history/finishedPerInterval.ts';
import type { Sluice } from '../Sluice.ts';
import type { QueueDepth } from '../stats/queueDepth.ts';
import type { ResolvedDashboardOptions } from './dashboardOptions.ts';
import type { SafeHtml } from './html.ts';

/** Reads the dashboard makes beyond the public API (each an indexed, bounded operation: see their files). */
export interface DashboardReads {
  throughput(bucketSeconds: number, buckets: number): Promise<Throughput>;
  finishedPerQueue(windowSeconds: number): Promise<{ counts: Map<string, number>; capped: boolean }>;
  batches(page: { before?: number; limit?: number }): Promise<{ batches: BatchStatus[]; next: number | null }>;
  /** The first `limit` queue names (live, dead or paused), in name order. */
  queueNames(limit: number): Promise<string[]>;
  queueDepths(queues: readonly string[]): Promise<Map<string, QueueDepth>>;
}

/** What a page or an action sees of one request. */
export interface PageContext {
  readonly sluice: Sluice;
  readonly reads: DashboardReads;
  readonly options: ResolvedDashboardOptions;
  /** The path below basePath ("/jobs/12") and its query. */
  readonly path: string;
  readonly query: URLSearchParams;
  /** The operator, as the auth hook named them ("anonymous" with auth: false). */
  readonly user: string;
  readonly csrf: string;
  /** A link to a dashboard path, with the query's non-empty values. */
  href(path: string, query?: Record<string, string | number | null | undefined>): string;
}

export type PageResult =
  | { readonly title: string; readonly section: string; readonly body: SafeHtml; readonly status?: number }
  | { readonly redirect: string }
  /** A file to download: its name, and its text piece by piece (sent as it is made). */
  | { readonly download: { readonly filename: string; readonly pieces: Iterable<string> } };

export type Page = (ctx: PageContext, params: readonly string[]) => Promise<PageResult>;
