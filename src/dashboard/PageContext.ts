import type { SluiceApi } from '../api/SluiceApi.ts';
import type { ResolvedDashboardOptions } from './dashboardOptions.ts';
import type { SafeHtml } from './html.ts';

/** What a page or an action sees of one request. */
export interface PageContext {
  /** The install's public surface: every page reads and acts through it, as an application would. */
  readonly sluice: SluiceApi;
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
