import { describe, expect, it } from 'vitest';
import { OptionsError } from '../../src/index.ts';
import { createTestInstall, enqueuedJobs } from '../../src/testing/index.ts';
import { testLogger, useTestDatabase } from '../helpers/testDatabase.ts';

const db = useTestDatabase('testing_install', { truncate: false });

async function tablesOf(prefix: string): Promise<string[]> {
  const rows = await db.query<Record<string, string>>(`SHOW TABLES LIKE '${prefix.replace(/_/g, '\\_')}%'`);
  return rows.map((row) => Object.values(row)[0] as string);
}

describe('createTestInstall', () => {
  it('makes a migrated install of its own prefix, apart from every other, and destroy drops all of its tables', async () => {
    const [one, two] = await Promise.all([
      createTestInstall({ url: db.url, logger: testLogger }),
      createTestInstall({ url: db.url, logger: testLogger }),
    ]);
    expect(one.prefix).toMatch(/^sluice_test_[0-9a-f]{8}_$/);
    expect(one.prefix).not.toBe(two.prefix);
    expect(await tablesOf(one.prefix)).toContain(`${one.prefix}jobs`);
    expect((await one.sluice.migrate()).applied).toEqual([]);

    await one.sluice.enqueue({ name: 'mail' });
    expect(await enqueuedJobs(one.sluice)).toHaveLength(1);
    expect(await enqueuedJobs(two.sluice)).toHaveLength(0);

    await Promise.all([one.destroy(), one.destroy(), two.destroy()]);
    expect(await tablesOf(one.prefix)).toEqual([]);
    expect(await tablesOf(two.prefix)).toEqual([]);
    expect(await tablesOf('sluice_')).toContain('sluice_jobs'); // the file's own install is untouched
  });

  it('refuses what createSluice refuses', async () => {
    await expect(createTestInstall({ url: db.url, logger: testLogger, poolMaks: 2 } as never)).rejects.toThrow(
      OptionsError,
    );
    await expect(createTestInstall({ url: db.url, logger: testLogger, tablePrefix: 'bad prefix' })).rejects.toThrow(
      OptionsError,
    );
  });
});
