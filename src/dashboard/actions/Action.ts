import { DashboardRequestError } from '../../errors.ts';
import type { Notice } from '../notices.ts';
import type { PageContext } from '../PageContext.ts';

/** What an action did: how many things it changed, and the notice the operator reads back (by code). */
export interface ActionOutcome {
  readonly count: number;
  readonly notice: Notice;
}

/**
 * One POST action of the dashboard. `destructive` ones need the confirmation the page asks for
 * (`confirmed=yes`); every action is refused in read-only mode, checked for CSRF and logged
 * (who, what, target, how many) by the router before and after `run`.
 */
export interface Action {
  readonly name: string;
  readonly destructive: boolean;
  /** What the action applies to, for the log line (validated input only). */
  target(form: URLSearchParams): Record<string, unknown>;
  run(ctx: PageContext, form: URLSearchParams): Promise<ActionOutcome>;
}

/** A required whole-number field (a job id), or DashboardRequestError naming it. */
export function idField(form: URLSearchParams, field = 'id'): number {
  const text = form.get(field);
  const n = Number(text);
  if (text === null || !/^\d{1,16}$/.test(text) || !Number.isSafeInteger(n) || n < 1)
    throw new DashboardRequestError(400, field, `must be a positive whole number (got ${JSON.stringify(text)})`);
  return n;
}

/** A required non-empty text field, or DashboardRequestError naming it. */
export function textField(form: URLSearchParams, field: string): string {
  const text = form.get(field);
  if (!text) throw new DashboardRequestError(400, field, 'is required');
  return text;
}
