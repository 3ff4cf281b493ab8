import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { SLUICE_DEFAULTS } from '../options.ts';
import { type RetentionSettings, readInstallSettings, writeInstallSettings } from '../settings/installSettings.ts';
import type { Guard } from './Guard.ts';

/** The install's settings: what every process follows, and which of them an operator stored. */
export interface InstallSettings extends RetentionSettings {
  /** The settings stored in the install (the others are at their defaults). */
  readonly stored: Partial<RetentionSettings>;
}

/** What `settings.set` takes: a retention in milliseconds (Infinity: keep until purged), or null to go back to the default. */
export type InstallSettingsUpdate = { readonly [K in keyof RetentionSettings]?: number | null };

function withDefaults(stored: Partial<RetentionSettings>): InstallSettings {
  return {
    historyRetentionMs: stored.historyRetentionMs ?? SLUICE_DEFAULTS.historyRetentionMs,
    deadRetentionMs: stored.deadRetentionMs ?? SLUICE_DEFAULTS.deadRetentionMs,
    stored,
  };
}

/**
 * `sluice.settings`: the install-wide settings every process follows — the history and dead-job
 * retentions. Workers read them as they start and every half minute, maintenance at every pass.
 */
export function settingsApi(db: Executor, tables: Tables, guard: Guard) {
  return {
    /** The settings in force for the install (stored, else the defaults). */
    get: (): Promise<InstallSettings> => guard(async () => withDefaults(await readInstallSettings(db, tables))),
    /**
     * Stores settings for every process of the install; null forgets one (back to its default).
     * A bad value throws OptionsError naming it, and nothing is written. Returns the settings in force.
     */
    set: (values: InstallSettingsUpdate): Promise<InstallSettings> =>
      guard(async () => withDefaults(await writeInstallSettings(db, tables, values))),
  };
}

export type SettingsApi = ReturnType<typeof settingsApi>;
