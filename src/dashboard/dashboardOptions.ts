import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import { OptionsError } from '../errors.ts';
import type { JobDefinition } from '../model/defineJob.ts';
import { defined, integerIn, rejectUnknownKeys } from '../options.ts';
import { maskSecrets, type PayloadMask } from './maskSecrets.ts';

/**
 * Who is asking: the operator's name (logged with every action), or null/undefined to refuse
 * with 401. `challenge`, when set, is sent as WWW-Authenticate with the 401 (basicAuth sets it).
 */
export type DashboardAuth = ((
  req: IncomingMessage,
) => string | null | undefined | Promise<string | null | undefined>) & {
  readonly challenge?: string;
};

export interface DashboardOptions {
  /** The path the app mounts the handler under ("/admin/jobs"); '' at the root. @defaultValue '' */
  readonly basePath?: string;
  /**
   * Required: a hook that names the operator or refuses (see basicAuth), or `false` to serve
   * anyone who can reach it — an explicit choice, never a default.
   */
  readonly auth?: DashboardAuth | false;
  /** Shows no action and refuses every POST. @defaultValue false */
  readonly readOnly?: boolean;
  /** What a page shows of a payload; the default masks fields named like secrets (password, token, …). */
  readonly maskPayload?: PayloadMask;
  /** Job definitions (a folder or a list) whose schedules the schedules page shows. @defaultValue none */
  readonly jobs?: string | readonly JobDefinition<any>[];
  /** How often a page refreshes its data (each client jitters it by ±20%). @defaultValue 5,000 */
  readonly refreshMs?: number;
  /** Most index entries one per-queue, per-state count reads; past it the count shows as "N+". @defaultValue 10,000 */
  readonly countLimit?: number;
  /** A queue whose oldest ready job waited longer than this is highlighted. @defaultValue 60,000 */
  readonly problemAgeMs?: number;
  /** Where actions are logged. @defaultValue the sluice instance's logger */
  readonly logger?: Logger;
  /**
   * Signs CSRF tokens (at least 32 characters). Give the same one to every instance behind a load
   * balancer without sticky sessions. @defaultValue random per handler: a restart asks open pages to reload
   */
  readonly csrfSecret?: string;
}

export interface ResolvedDashboardOptions {
  readonly basePath: string;
  readonly auth: DashboardAuth | false;
  readonly readOnly: boolean;
  readonly maskPayload: PayloadMask;
  readonly jobs: string | readonly JobDefinition<any>[] | null;
  readonly refreshMs: number;
  readonly countLimit: number;
  readonly problemAgeMs: number;
  readonly logger: Logger;
  readonly csrfSecret: string | null;
}

const KEYS = [
  'basePath',
  'auth',
  'readOnly',
  'maskPayload',
  'jobs',
  'refreshMs',
  'countLimit',
  'problemAgeMs',
  'logger',
  'csrfSecret',
];

/** "/admin/jobs": segments of URL-safe characters, no trailing slash. */
const BASE_PATH = /^(\/[A-Za-z0-9._~-]+)*$/;

export function resolveDashboardOptions(options: DashboardOptions, logger: Logger): ResolvedDashboardOptions {
  rejectUnknownKeys('sluice.dashboard', options, KEYS);
  const o = defined(options);
  if (o.auth === undefined) {
    throw new OptionsError(
      'auth',
      'is required: a hook (req) => operator name | null, e.g. basicAuth({ user, password }), or false to allow anyone who can reach the handler',
    );
  }
  if (o.auth !== false && typeof o.auth !== 'function') throw new OptionsError('auth', 'must be a function or false');
  const basePath = o.basePath ?? '';
  if (typeof basePath !== 'string' || !BASE_PATH.test(basePath)) {
    throw new OptionsError(
      'basePath',
      `must be '' or a path like "/admin/jobs" (no trailing slash) (got ${JSON.stringify(basePath)})`,
    );
  }
  if (o.maskPayload !== undefined && typeof o.maskPayload !== 'function')
    throw new OptionsError('maskPayload', 'must be a function (job) => what to show');
  if (o.readOnly !== undefined && typeof o.readOnly !== 'boolean')
    throw new OptionsError('readOnly', 'must be a boolean');
  if (o.csrfSecret !== undefined && (typeof o.csrfSecret !== 'string' || o.csrfSecret.length < 32))
    throw new OptionsError('csrfSecret', 'must be a string of at least 32 characters');
  return {
    basePath,
    auth: o.auth,
    readOnly: o.readOnly ?? false,
    maskPayload: o.maskPayload ?? maskSecrets,
    jobs: o.jobs ?? null,
    refreshMs: integerIn('refreshMs', o.refreshMs ?? 5_000, 500, 3_600_000),
    countLimit: integerIn('countLimit', o.countLimit ?? 10_000, 1, 1_000_000),
    problemAgeMs: integerIn('problemAgeMs', o.problemAgeMs ?? 60_000, 1),
    logger: o.logger ?? logger,
    csrfSecret: o.csrfSecret ?? null,
  };
}
