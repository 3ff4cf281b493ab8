import { openSluice } from './openSluice.ts';
import { COMMON_HELP, help, parse } from './parse.ts';

export const MIGRATE_HELP = `sluice migrate: apply pending schema migrations (knex's lock table serialises concurrent runs)

${COMMON_HELP}`;

export async function migrateCommand(argv: string[]): Promise<number> {
  const { values } = parse(argv, {});
  if (values.help) return help(MIGRATE_HELP);
  const sluice = await openSluice(values);
  try {
    const { applied } = await sluice.migrate();
    sluice.logger.info(
      { event: 'migrate:completed', applied, url: sluice.url },
      applied.length ? `applied ${applied.length} migration(s)` : 'schema is up to date',
    );
    return 0;
  } finally {
    await sluice.close();
  }
}
