import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { OptionsError } from './errors.ts';
import { MAX_PAYLOAD_BYTES } from './maxPayloadBytes.ts';
import { nearestName } from './nearestName.ts';
import type { PayloadRedactor } from './payloadRedactor.ts';

/**
 * createSluice's options: what one install (a table prefix in one database) shares. The worker's
 * options live in worker/workerOptions.ts, the maintenance process's in
 * maintenance/maintenanceOptions.ts; this file also holds the helpers all three resolve with.
 */
export interface SluiceOptions {
  /**
   * mysql://user:password@host:port/database. Without `url`, `knex`, `MYSQL_URL` or
   * `MYSQL_URL_FILE`, createSluice throws OptionsError: sluice guesses no server.
   * @defaultValue `MYSQL_URL`, then the contents of the file `MYSQL_URL_FILE` names
   */
  url?: string;
  /** Share the application's own knex (mysql2 client). sluice then never closes it. */
  knex?: Knex;
  /** Prefix of every sluice table. @defaultValue `'sluice_'` */
  tablePrefix?: string;
  /** A pino logger; sluice logs through one subscriber of its events. @defaultValue a new pino logger at `logLevel` */
  logger?: Logger;
  /**
   * The level of the logger sluice creates when given none (a pino level: 'trace', 'debug', 'info',
   * 'warn', 'error', 'fatal' or 'silent'). A library stays quiet in an application's scripts: at
   * 'warn' an enqueue prints nothing, a failed job or a worker's error still does. The `sluice`
   * commands log at 'info'. @defaultValue `LOG_LEVEL`, else 'warn'
   */
  logLevel?: string;
  /**
   * pino redaction paths added to sluice's defaults (credentials by their usual names) in the
   * logger sluice creates; with your own `logger`, configure redaction there. @defaultValue none
   */
  logRedact?: string[];
  /** Pool size when sluice opens its own pool. @defaultValue 10 */
  poolMax?: number;
  /** Largest payload, as JSON, in bytes. @defaultValue 1 MiB */
  maxPayloadBytes?: number;
  /** Largest enqueueBatch. @defaultValue 1,000,000 */
  maxBatchSize?: number;
  /** Most rows in one multi-row INSERT (the packet limit also applies). @defaultValue 5,000 */
  maxRowsPerInsert?: number;
  /** How long a finished job's idempotency key keeps refusing duplicates. @defaultValue 24 h */
  idempotencyRetentionMs?: number;
  /**
   * How long completed and cancelled jobs stay in job_history; 0 keeps none (none is written),
   * Infinity keeps them until purged. Prefer the install's setting (`sluice.settings.set`), which
   * every process follows: a value here that differs from the stored one is refused when a worker
   * or maintenance process starts. @defaultValue the install's setting, else 24 h
   */
  historyRetentionMs?: number;
  /**
   * How long dead jobs are kept; 0 keeps none (each is pruned at the next maintenance pass),
   * Infinity keeps them until purged. Like historyRetentionMs, the install's setting wins.
   * @defaultValue the install's setting, else 7 days
   */
  deadRetentionMs?: number;
  /**
   * Largest handler return value kept with the finished job (as JSON, in bytes). A bigger one is
   * dropped with a `result:dropped` warning and the job still succeeds; 0 keeps no results.
   * @defaultValue 64 KiB
   */
  maxResultBytes?: number;
  /**
   * How many of a job's latest attempts keep what they left behind: the error of each failed
   * attempt (its number, time, worker, message, code and stack, each cut to a bounded size) and
   * the lines each attempt kept with `ctx.log`. Shown by `sluice.jobs.get(id)` while the job is
   * live and then with its history or dead row; written only when an attempt fails (with its
   * retry or dead-letter write) or logs. 0 keeps none. @defaultValue 10
   */
  keptAttempts?: number;
  /**
   * Most lines one attempt keeps with `ctx.log`; later lines are counted as dropped, not kept.
   * 0 keeps none. @defaultValue 100
   */
  maxLogLines?: number;
  /**
   * Most bytes (message and fields, as UTF-8) one attempt keeps with `ctx.log`; a line that does
   * not fit is counted as dropped. @defaultValue 32 KiB
   */
  maxLogBytes?: number;
  /**
   * On MariaDB, sluice's own sessions (not an application's knex) set `idle_transaction_timeout`
   * to this, in whole seconds: a transaction left open and idle that long — a worker frozen
   * between its exactly-once writes and its COMMIT (SIGSTOP, a paused VM, a partitioned host) —
   * has its connection closed by the server, which rolls it back and frees its row locks. An
   * exactly-once handler must therefore not sit idle inside `ctx.trx` that long. 0 keeps the
   * server's setting. MySQL has no such timeout (see README). @defaultValue 60,000
   */
  idleTransactionTimeoutMs?: number;
  /**
   * What to keep of a finished job's payload in job_history and dead_jobs (see PayloadRedactor):
   * called as each job is copied there; its return value is stored instead. @defaultValue none:
   * payloads are kept as they were
   */
  redactPayload?: PayloadRedactor | null;
}

/** What resolveSluiceOptions returns: every tunable set (the connection and logger are not options of the install). */
export type ResolvedSluiceOptions = Readonly<
  Required<Omit<SluiceOptions, 'url' | 'knex' | 'logger' | 'logLevel' | 'logRedact' | 'redactPayload'>> & {
    logRedact: readonly string[];
    redactPayload: PayloadRedactor | null;
  }
>;

export const SLUICE_DEFAULTS = {
  tablePrefix: 'sluice_',
  poolMax: 10,
  maxPayloadBytes: 1024 * 1024,
  maxBatchSize: 1_000_000,
  maxRowsPerInsert: 5_000,
  idempotencyRetentionMs: 24 * 3600 * 1000,
  historyRetentionMs: 24 * 3600 * 1000,
  deadRetentionMs: 7 * 24 * 3600 * 1000,
  logRedact: [],
  maxResultBytes: 64 * 1024,
  keptAttempts: 10,
  maxLogLines: 100,
  maxLogBytes: 32 * 1024,
  idleTransactionTimeoutMs: 60_000,
  redactPayload: null,
} as const satisfies ResolvedSluiceOptions;

/** The result column is a MEDIUMTEXT (16 MiB); a result also travels in one statement, under max_allowed_packet. */
const MAX_RESULT_BYTES = 8 * 1024 * 1024;

/** One attempt's log lines travel in the statements that write them, under max_allowed_packet. */
const MAX_LOG_BYTES = 1024 * 1024;

const SLUICE_KEYS = [...Object.keys(SLUICE_DEFAULTS), 'url', 'knex', 'logger', 'logLevel'];

/** pino's levels, for `logLevel`. */
const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

export function resolveSluiceOptions(options: SluiceOptions): ResolvedSluiceOptions {
  rejectUnknownKeys('createSluice', options, SLUICE_KEYS);
  const r = { ...SLUICE_DEFAULTS, ...defined(options) };
  integerIn('poolMax', r.poolMax, 1, 1000);
  integerIn('maxPayloadBytes', r.maxPayloadBytes, 1, MAX_PAYLOAD_BYTES);
  integerIn('maxBatchSize', r.maxBatchSize, 1);
  integerIn('maxRowsPerInsert', r.maxRowsPerInsert, 1, 100_000);
  integerIn('idempotencyRetentionMs', r.idempotencyRetentionMs, 1);
  retention('historyRetentionMs', r.historyRetentionMs);
  retention('deadRetentionMs', r.deadRetentionMs);
  if (!Array.isArray(r.logRedact) || r.logRedact.some((p) => typeof p !== 'string')) {
    throw new OptionsError('logRedact', 'must be a list of pino redaction paths (strings)');
  }
  integerIn('maxResultBytes', r.maxResultBytes, 0, MAX_RESULT_BYTES);
  integerIn('keptAttempts', r.keptAttempts, 0, 1_000);
  integerIn('maxLogLines', r.maxLogLines, 0, 10_000);
  integerIn('maxLogBytes', r.maxLogBytes, 1, MAX_LOG_BYTES);
  if (r.redactPayload !== null && typeof r.redactPayload !== 'function') {
    throw new OptionsError('redactPayload', 'must be a function (job) => payload to keep, or null');
  }
  integerIn('idleTransactionTimeoutMs', r.idleTransactionTimeoutMs, 0, 31_536_000_000);
  const { url: _url, knex: _knex, logger: _logger, logLevel, ...resolved } = r as typeof r & SluiceOptions;
  if (logLevel !== undefined && !LOG_LEVELS.includes(logLevel)) {
    throw new OptionsError('logLevel', `must be one of ${LOG_LEVELS.join(', ')} (got ${String(logLevel)})`);
  }
  return resolved;
}

/** A retention: whole milliseconds, 0 to keep none, or Infinity to keep until purged. */
export function retention(option: string, value: unknown): void {
  if (value === Number.POSITIVE_INFINITY) return;
  if (!Number.isInteger(value) || (value as number) < 0) {
    throw new OptionsError(
      option,
      `must be a whole number of milliseconds, 0 to keep none, or Infinity to keep all (got ${String(value)})`,
    );
  }
}

/**
 * Names people reach for that sluice spells otherwise, too far apart for an edit-distance guess:
 * `{ transaction: trx }` (knex's own word) must point at `trx`, since an option left out there
 * commits the jobs outside the caller's transaction.
 */
const MISNAMED: Readonly<Record<string, string>> = {
  transaction: 'trx',
  transacting: 'trx',
  tx: 'trx',
  knexTransaction: 'trx',
};

/** ` (did you mean trx?)`: the known name `key` most likely meant, or ''. */
export function didYouMean(key: string, known: Iterable<string>): string {
  const alias = MISNAMED[key];
  const list = [...known];
  const nearest = alias !== undefined && list.includes(alias) ? alias : nearestName(key, list);
  return nearest ? ` (did you mean ${nearest}?)` : '';
}

/** A knex transaction (a function carrying commit and rollback), handed where an object of options goes. */
function isKnexTransaction(value: unknown): boolean {
  const trx = value as { commit?: unknown; rollback?: unknown; isTransaction?: unknown } | null;
  return (
    (typeof value === 'function' || typeof value === 'object') &&
    trx !== null &&
    (trx.isTransaction === true || (typeof trx.commit === 'function' && typeof trx.rollback === 'function'))
  );
}

/**
 * The one check of every public call's options object, nested ones too: throws OptionsError for
 * the first key that is not an option of `family` (the call, as its user writes it:
 * 'sluice.enqueueBatch'), with the known name it most likely meant; for something not an object
 * (a knex transaction passed where the options go: "did you mean trx?"). undefined and null pass
 * (no options). Cheap enough for a single enqueue: one loop over the given keys.
 */
export function rejectUnknownKeys(family: string, options: unknown, known: readonly string[]): void {
  if (options === undefined || options === null) return;
  if (typeof options !== 'object' || Array.isArray(options) || isKnexTransaction(options)) {
    const given = isKnexTransaction(options)
      ? 'a knex transaction'
      : Array.isArray(options)
        ? 'an array'
        : typeof options;
    const hint = isKnexTransaction(options)
      ? ': sluice takes a transaction only as the trx option of enqueue and enqueueBatch, { trx } (did you mean trx?)'
      : '';
    throw new OptionsError(family, `takes an object of options here, not ${given}${hint}`);
  }
  for (const key in options) {
    if (!Object.hasOwn(options, key) || known.includes(key)) continue;
    throw new OptionsError(key, `is not an option of ${family}${didYouMean(key, known)}`);
  }
}

/**
 * The keys of an options type, listed once: `optionKeys<WaitOptions>({ timeoutMs: true, maxPollMs: true })`.
 * A key added to the type and not to the list fails the typecheck, so rejectUnknownKeys never
 * refuses an option the type allows.
 */
export function optionKeys<T>(keys: { readonly [K in keyof Required<T>]: true }): readonly string[] {
  return Object.keys(keys);
}

/** An integer in [min, max], or OptionsError naming the option. */
export function integerIn(option: string, value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (!Number.isInteger(value) || (value as number) < min || (value as number) > max) {
    throw new OptionsError(option, `must be an integer in [${min}, ${max}] (got ${String(value)})`);
  }
  return value as number;
}

/** A number of at least `min` (fractions allowed), or OptionsError naming the option. */
export function numberAtLeast(option: string, value: unknown, min: number): number {
  if (!(typeof value === 'number' && value >= min)) {
    throw new OptionsError(option, `must be a number of at least ${min} (got ${String(value)})`);
  }
  return value;
}

/** Drops keys whose value is undefined, so `{ ...DEFAULTS, ...defined(options) }` keeps defaults. */
export function defined<T extends object>(options: T | undefined): Partial<T> {
  return Object.fromEntries(Object.entries(options ?? {}).filter(([, v]) => v !== undefined)) as Partial<T>;
}
