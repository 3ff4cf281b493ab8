import type { SluiceOptions } from '../options.ts';
import type { Sluice } from '../Sluice.ts';

/** What every command's flags say about the install: --url (else MYSQL_URL) and --prefix. */
export interface InstallFlags {
  readonly url?: string | undefined;
  readonly prefix?: string | undefined;
}

export type OpenOptions = Omit<SluiceOptions, 'url' | 'tablePrefix' | 'logger' | 'knex'> & {
  /** pino level of the command's log. @defaultValue LOG_LEVEL, else 'info' */
  readonly logLevel?: string;
};

/**
 * createSluice for a command, loaded on first use: the library (knex, mysql2, pino) is imported
 * here, when a command runs, never while the CLI only prints help.
 */
export async function openSluice(flags: InstallFlags, options: OpenOptions = {}): Promise<Sluice> {
  const [{ createSluice }, { createLogger }] = await Promise.all([import('../Sluice.ts'), import('../logging.ts')]);
  const { logLevel, ...rest } = options;
  return createSluice({
    ...rest,
    url: flags.url,
    tablePrefix: flags.prefix,
    // A command's process logs what it does (a library's default is quieter: see createLogger).
    logger: createLogger({ level: logLevel ?? process.env.LOG_LEVEL ?? 'info' }),
  });
}
