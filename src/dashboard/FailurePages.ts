import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { explainFailure } from '../db/explainFailure.ts';
import { DashboardRequestError, JobDefinitionError, OptionsError, SchemaVersionError } from '../errors.ts';
import { errorFields } from '../errorText.ts';
import { html } from './html.ts';
import { layout } from './layout.ts';
import type { PageContext } from './PageContext.ts';
import { send } from './respond.ts';

/**
 * The page a failed request gets, and the log line it is worth:
 * - a request the dashboard refuses (DashboardRequestError, OptionsError: a bad id, filter or
 *   cursor) — its status (400 when none) and its message, nothing logged;
 * - a database without sluice's tables (not migrated yet) or with a schema this build does not
 *   know — 503 and what the CLI says ("run `sluice migrate` … first"), logged once until a page
 *   works again (every open page asks every few seconds);
 * - a job file that does not load (the schedules page and a job's retry limit read them) — 500,
 *   that file and why, and the error logged;
 * - anything else — 500, a line saying where to look, and the error logged.
 */
export class FailurePages {
  #saidUnavailable = false;

  constructor(private readonly logger: Logger) {}

  /** A page worked: the next "database not ready" is news again. */
  recovered(): void {
    this.#saidUnavailable = false;
  }

  send(ctx: PageContext, res: ServerResponse, failure: unknown, headers: Record<string, string>): void {
    // The dashboard's own reads are not behind Sluice's guard: a missing table reads as the CLI says it.
    const error = explainFailure(null, failure);
    if (error instanceof SchemaVersionError) {
      this.#unavailable(ctx, res, error, headers);
      return;
    }
    const known = error instanceof DashboardRequestError || error instanceof OptionsError;
    const status = error instanceof DashboardRequestError ? error.status : known ? 400 : 500;
    if (!known)
      this.logger.error(
        { event: 'dashboard:failed', path: ctx.path, err: errorFields(error) },
        'dashboard: a page failed',
      );
    // The message of an unexpected error may name a host or a query: the page says only where to look.
    // A job file that does not load (the schedules page imports them) is named as such.
    const message = known
      ? (error as Error).message
      : error instanceof JobDefinitionError
        ? `a job file could not be loaded: ${error.message}`
        : 'the page could not be read from the database; see the log';
    const body = html`<p class="notice failure" role="alert" data-status="${status}">${message}</p>`;
    send(res, status, layout(ctx, { title: `Error ${status}`, section: '', body }).text, headers);
  }

  #unavailable(
    ctx: PageContext,
    res: ServerResponse,
    error: SchemaVersionError,
    headers: Record<string, string>,
  ): void {
    if (!this.#saidUnavailable)
      this.logger.warn({ event: 'dashboard:unavailable', err: errorFields(error) }, `dashboard: ${error.message}`);
    this.#saidUnavailable = true;
    const body = html`<p class="notice failure" role="alert" data-status="503">${error.message}</p>`;
    send(res, 503, layout(ctx, { title: 'Database not ready', section: '', body }).text, {
      ...headers,
      'Retry-After': '30',
    });
  }
}
