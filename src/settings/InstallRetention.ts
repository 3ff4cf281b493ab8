import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { OptionsError } from '../errors.ts';
import type { SluiceEvents } from '../events.ts';
import { type RetentionSettings, readInstallSettings, type SettingName } from './installSettings.ts';

/** How stale a running process's copy of the settings may grow before it reads them again. */
export const SETTINGS_MAX_AGE_MS = 30_000;

/**
 * The retentions this process follows, one for the whole install: what the settings table holds,
 * else what this process was given (createSluice's historyRetentionMs / deadRetentionMs), else the
 * defaults. Workers read it as they start, maintenance at every pass, the API before it writes
 * history. A value this process was given that differs from the stored one is refused when the
 * process starts (OptionsError naming both); once running, a setting an operator changes wins
 * and the difference is reported (`settings:overridden`). A value given while the install stores
 * none is followed here and reported (`settings:unshared`): other processes may prune at theirs.
 */
export class InstallRetention implements RetentionSettings {
  #current: RetentionSettings;
  #stored: Partial<RetentionSettings> = {};
  #loads = 0;
  #readAt = Number.NEGATIVE_INFINITY;
  #reading: Promise<RetentionSettings> | null = null;
  readonly #reported = new Set<string>();

  constructor(
    private readonly db: Executor,
    private readonly tables: Tables,
    /** This process's resolved values (its given ones or the defaults). */
    private readonly own: RetentionSettings,
    /** The values this process was given explicitly. */
    private readonly given: Partial<RetentionSettings>,
    private readonly events: SluiceEvents,
  ) {
    this.#current = own;
  }

  get historyRetentionMs(): number {
    return this.#current.historyRetentionMs;
  }

  get deadRetentionMs(): number {
    return this.#current.deadRetentionMs;
  }

  /** What the settings table held at the last read: only the settings an operator stored. */
  get stored(): Partial<RetentionSettings> {
    return this.#stored;
  }

  /**
   * Reads the stored settings and follows them. The first read of a process refuses a given value
   * that differs from a stored one; later reads follow the stored one and report the difference.
   */
  async load(): Promise<RetentionSettings> {
    const stored = await readInstallSettings(this.db, this.tables);
    const first = this.#loads++ === 0;
    const next = { ...this.own };
    for (const setting of Object.keys(this.own) as SettingName[]) {
      const given = this.given[setting];
      const kept = stored[setting];
      if (kept !== undefined) {
        if (given !== undefined && given !== kept) {
          if (first) {
            throw new OptionsError(
              setting,
              `is ${given} in this process but the install's setting is ${kept}: drop it here, or change the install's with \`sluice settings set\` / sluice.settings.set()`,
            );
          }
          this.#reportOnce(`overridden:${setting}:${kept}`, () =>
            this.events.emit('settings:overridden', { setting, given, stored: kept }),
          );
        }
        next[setting] = kept;
      } else if (given !== undefined) {
        this.#reportOnce(`unshared:${setting}:${given}`, () =>
          this.events.emit('settings:unshared', { setting, given }),
        );
      }
    }
    this.#stored = stored;
    this.#current = next;
    this.#readAt = performance.now();
    return next;
  }

  /** load(), unless the last read is younger than maxAgeMs; callers meanwhile share the read in progress. */
  async fresh(maxAgeMs: number): Promise<RetentionSettings> {
    if (performance.now() - this.#readAt < maxAgeMs) return this.#current;
    this.#reading ??= this.load().finally(() => {
      this.#reading = null;
    });
    return this.#reading;
  }

  #reportOnce(key: string, report: () => void): void {
    if (this.#reported.has(key)) return;
    this.#reported.add(key);
    report();
  }
}

/** Pure: the retentions a process's options give explicitly (an absent or undefined one is not given). */
export function givenRetention(
  options: Partial<Record<keyof RetentionSettings, number | undefined>>,
): Partial<RetentionSettings> {
  const given: { -readonly [K in keyof RetentionSettings]?: number } = {};
  if (options.historyRetentionMs !== undefined) given.historyRetentionMs = options.historyRetentionMs;
  if (options.deadRetentionMs !== undefined) given.deadRetentionMs = options.deadRetentionMs;
  return given;
}
