import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSluice, OptionsError } from '../../src/index.ts';
import { testLogger, useTestDatabase } from '../helpers/testDatabase.ts';

const db = useTestDatabase('connect');

describe('which server createSluice connects to', () => {
  const saved = { url: process.env.MYSQL_URL, file: process.env.MYSQL_URL_FILE };
  beforeEach(() => {
    delete process.env.MYSQL_URL;
    delete process.env.MYSQL_URL_FILE;
  });
  afterEach(() => {
    for (const [key, value] of [
      ['MYSQL_URL', saved.url],
      ['MYSQL_URL_FILE', saved.file],
    ] as const) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  });

  it('none named (no url, no knex, no MYSQL_URL): refused, naming MYSQL_URL and url; no default server', () => {
    let error: unknown;
    try {
      createSluice({ logger: testLogger });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(OptionsError);
    expect((error as OptionsError).code).toBe('SLUICE_OPTIONS_INVALID');
    expect((error as OptionsError).option).toBe('url');
    expect((error as Error).message).toMatch(/MYSQL_URL/);
    expect((error as Error).message).toMatch(/does not guess a server/);
  });

  it('an explicit url, or the application’s knex, needs no MYSQL_URL', async () => {
    const byUrl = createSluice({ url: db.url, logger: testLogger });
    const byKnex = createSluice({ knex: db.sluice.knex, logger: testLogger });
    try {
      await byUrl.enqueue({ name: 'by-url' });
      await byKnex.enqueue({ name: 'by-knex' });
      const rows = await db.query<{ name: string }>('SELECT name FROM sluice_jobs ORDER BY name');
      expect(rows.map((r) => r.name)).toEqual(['by-knex', 'by-url']);
    } finally {
      await Promise.all([byUrl.close(), byKnex.close()]);
    }
  });
});
