import { SLUICE_DEFAULTS } from '../options.ts';
import { openSluice } from './openSluice.ts';
import { COMMON_HELP, choice, help, parse } from './parse.ts';
import { UsageError } from './UsageError.ts';

export const SETTINGS_HELP = `sluice settings: the install's settings, followed by every process of it (workers, maintenance,
the API); a process started with a different value of its own is refused

  sluice settings             print the settings in force as JSON, and which are stored
  sluice settings set [--history-retention-ms N] [--dead-retention-ms N]
                              store them for the whole install: N milliseconds, Infinity (keep
                              until purged), or default (forget the stored value); maintenance
                              follows a change at its next pass, workers within half a minute

  --history-retention-ms N    keep completed and cancelled jobs this long; 0 keeps none (none is
                              written) (default: ${SLUICE_DEFAULTS.historyRetentionMs})
  --dead-retention-ms N       keep dead jobs this long; 0 keeps none (default: ${SLUICE_DEFAULTS.deadRetentionMs})
${COMMON_HELP}`;

const ACTIONS = ['show', 'set'] as const;

export async function settingsCommand(argv: string[]): Promise<number> {
  const { values: v, positionals } = parse(
    argv,
    { 'history-retention-ms': { type: 'string' }, 'dead-retention-ms': { type: 'string' } },
    1,
  );
  if (v.help) return help(SETTINGS_HELP);
  const action = choice('action', positionals[0] ?? 'show', ACTIONS);
  const historyRetentionMs = retentionFlag('history-retention-ms', v['history-retention-ms']);
  const deadRetentionMs = retentionFlag('dead-retention-ms', v['dead-retention-ms']);
  const given = historyRetentionMs !== undefined || deadRetentionMs !== undefined;
  if (action === 'show' && given) throw new UsageError('the retention flags go with set: sluice settings set …');
  if (action === 'set' && !given) throw new UsageError('set needs --history-retention-ms or --dead-retention-ms');
  const sluice = await openSluice(v, { poolMax: 2 });
  try {
    const settings =
      action === 'set'
        ? await sluice.settings.set({ historyRetentionMs, deadRetentionMs })
        : await sluice.settings.get();
    // JSON has no Infinity: it prints as the string "Infinity".
    process.stdout.write(
      `${JSON.stringify(settings, (_key, value) => (value === Number.POSITIVE_INFINITY ? 'Infinity' : value))}\n`,
    );
    return 0;
  } finally {
    await sluice.close();
  }
}

/** A retention flag: whole milliseconds, `Infinity`, or `default` (null: forget the stored value). */
function retentionFlag(name: string, value: string | boolean | undefined): number | null | undefined {
  if (value === undefined) return undefined;
  if (value === 'default') return null;
  if (value === 'Infinity') return Number.POSITIVE_INFINITY;
  if (typeof value !== 'string' || !/^\d+$/.test(value)) {
    throw new UsageError(`--${name} must be whole milliseconds, Infinity or default (got "${String(value)}")`);
  }
  return Number(value);
}
