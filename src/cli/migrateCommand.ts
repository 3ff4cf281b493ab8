import { createSluice } from '../Sluice.ts';
import { COMMON_HELP, parse, help } from './parse.ts';

export const MIGRATE_HELP = `sluice migrate: apply pending schema migrations

${COMMON_HELP}`;

export async function migrateCommand(argv: string[]): Promise<number> {
  const { values } = parse(argv, {});
  if (values.help) return help(MIGRATE_HELP);
  const sluice = createSluice({ url: values.url, tablePrefix: values.prefix });
  try {
    const { applied } = await sluice.migrate();
    sluice.logger.info({ event: 'migrate:completed', applied, url: sluice.url }, applied.length ? `applied ${applied.length} migration(s)` : 'schema is up to date');
    return 0;
  } finally {
    await sluice.close();
  }
}
