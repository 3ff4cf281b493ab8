import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { rejectUnknownKeys, retention } from '../options.ts';

/** The install's retentions, in milliseconds (Infinity: kept until purged; 0: none kept). */
export interface RetentionSettings {
  readonly historyRetentionMs: number;
  readonly deadRetentionMs: number;
}

/** The settings an operator can store for the whole install. */
export type SettingName = keyof RetentionSettings;

/** Each setting's row name in the settings table. */
const ROW_OF: Readonly<Record<SettingName, string>> = {
  historyRetentionMs: 'history_retention_ms',
  deadRetentionMs: 'dead_retention_ms',
};

/** Params: ?1 row names (list). Returns the stored rows among them (primary key reads). */
const sqlRead = (t: Tables) => `
SELECT name, value
FROM ${t.settings}
WHERE name IN (?)`;

/** Params: ?1 name, ?2 value. Stores one setting, replacing its value. affectedRows 1 (new) or 2 (replaced). */
const sqlWrite = (t: Tables) => `
INSERT INTO ${t.settings} (name, value, updated_at)
VALUES (?, ?, NOW(3))
ON DUPLICATE KEY UPDATE value = VALUES(value), updated_at = NOW(3)`;

/** Params: ?1 name. Forgets one setting: it is back at its default. affectedRows 0 or 1. */
const sqlForget = (t: Tables) => `
DELETE FROM ${t.settings}
WHERE name = ?`;

/** The settings stored for the install: only those an operator set (a missing one keeps its default). */
export async function readInstallSettings(db: Executor, tables: Tables): Promise<Partial<RetentionSettings>> {
  const rows = await db.select<{ name: string; value: string }>(sqlRead(tables), [Object.values(ROW_OF)]);
  const stored: Partial<Record<SettingName, number>> = {};
  for (const [setting, row] of Object.entries(ROW_OF) as [SettingName, string][]) {
    const found = rows.find((r) => r.name === row);
    if (!found) continue;
    const value = found.value === 'Infinity' ? Number.POSITIVE_INFINITY : Number(found.value);
    // Written only through writeInstallSettings, which validates; a row edited by hand is named.
    retention(`${setting} (settings row ${row})`, value);
    stored[setting] = value;
  }
  return stored;
}

/**
 * Stores settings for the whole install, each validated first (a bad one throws OptionsError
 * naming it, and nothing is written); `null` forgets a setting, back to its default. Autocommit
 * statements, one per setting. Returns what is stored afterwards.
 */
export async function writeInstallSettings(
  db: Executor,
  tables: Tables,
  values: { readonly [K in SettingName]?: number | null },
): Promise<Partial<RetentionSettings>> {
  rejectUnknownKeys('sluice.settings.set(values)', values, Object.keys(ROW_OF));
  for (const [setting, value] of Object.entries(values)) {
    if (value !== null && value !== undefined) retention(setting, value);
  }
  for (const [setting, value] of Object.entries(values) as [SettingName, number | null | undefined][]) {
    if (value === undefined) continue;
    if (value === null) await db.write(sqlForget(tables), [ROW_OF[setting]]);
    else await db.write(sqlWrite(tables), [ROW_OF[setting], String(value)]);
  }
  return readInstallSettings(db, tables);
}
