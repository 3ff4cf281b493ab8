import knexFactory from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startThrowawayServer, type ThrowawayServer } from '../../src/demo/server/throwawayServer.ts';
import { createSluice, OptionsError, type Sluice } from '../../src/index.ts';
import { testLogger } from '../helpers/testDatabase.ts';

/**
 * A server whose sql_mode holds NO_BACKSLASH_ESCAPES (a private one: it is a server-wide
 * setting). mysql2 escapes values with backslashes on the client; under that mode the server
 * reads them as text, and a crafted string could close its literal and add SQL of its own.
 */
let server: ThrowawayServer;
let sluice: Sluice;

beforeAll(async () => {
  server = await startThrowawayServer({ extraArgs: ['--sql-mode=NO_BACKSLASH_ESCAPES,STRICT_TRANS_TABLES'] });
  sluice = createSluice({ url: server.url, logger: testLogger });
  await sluice.migrate();
});

afterAll(async () => {
  await sluice?.close();
  await server?.stop();
});

async function rows<T>(sql: string): Promise<T[]> {
  return ((await sluice.knex.raw(sql)) as [T[]])[0];
}

/** A payload string that, escaped with backslashes but read without them, ends its literal and adds a row. */
const INJECTION = "', 0, NOW(3)), ('default', 'stolen', (SELECT GROUP_CONCAT(User) FROM mysql.user), 0, NOW(3)) #";

describe("sluice's own pool on a server with NO_BACKSLASH_ESCAPES", () => {
  it('stores values exactly and injects nothing: one job, its payload byte for byte', async () => {
    const payload = { text: INJECTION, path: 'C:\\temp\\new', quote: "it's \\' odd" };
    const { id } = await sluice.enqueue({ name: 'work', payload });
    const jobs = await rows<{ id: number; name: string; payload: string }>('SELECT id, name, payload FROM sluice_jobs');
    expect(jobs.map((j) => [Number(j.id), j.name])).toEqual([[id, 'work']]);
    expect(JSON.parse(jobs[0]!.payload)).toEqual(payload);
  });

  it('a crafted filter value matches only itself: purging one name leaves another queue’s dead jobs', async () => {
    await sluice.knex.raw(`INSERT INTO sluice_dead_jobs (id, queue, name, payload, priority, retry_times, created_at, failed_at)
      VALUES (101, 'a', 'x', '{}', 0, 1, NOW(3), NOW(3)), (102, 'b', 'y', '{}', 0, 1, NOW(3), NOW(3))`);
    expect(await sluice.deadJobs.purge({ name: "x' OR 1=1 #" })).toEqual({ purged: 0 });
    expect(await sluice.deadJobs.purge({ queue: "b' OR '1'='1" })).toEqual({ purged: 0 });
    expect((await rows<{ n: number }>('SELECT COUNT(*) AS n FROM sluice_dead_jobs'))[0]?.n).toBe(2);
  });
});

describe("an application's knex on such a server", () => {
  it('is refused with an OptionsError before anything is written', async () => {
    const appKnex = knexFactory({ client: 'mysql2', connection: { uri: server.url, charset: 'utf8mb4' } as never });
    const app = createSluice({ knex: appKnex, logger: testLogger });
    try {
      const before = (await rows<{ n: number }>('SELECT COUNT(*) AS n FROM sluice_jobs'))[0]?.n;
      const error = await app.enqueue({ name: 'work', payload: { text: INJECTION } }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OptionsError);
      expect((error as Error).message).toContain('NO_BACKSLASH_ESCAPES');
      const inTrx = await appKnex
        .transaction((trx) => app.enqueueBatch([{ name: 'work' }], { trx }))
        .catch((e: unknown) => e);
      expect(inTrx).toBeInstanceOf(OptionsError);
      expect((await rows<{ n: number }>('SELECT COUNT(*) AS n FROM sluice_jobs'))[0]?.n).toBe(before);
    } finally {
      await appKnex.destroy();
    }
  });

  it('an application connection without utf8mb4 is refused too', async () => {
    await sluice.knex.raw("SET GLOBAL sql_mode = 'STRICT_TRANS_TABLES'");
    const appKnex = knexFactory({ client: 'mysql2', connection: { uri: server.url, charset: 'latin1' } as never });
    const app = createSluice({ knex: appKnex, logger: testLogger });
    try {
      const error = await app.enqueue({ name: 'work' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OptionsError);
      expect((error as Error).message).toContain('utf8mb4');
    } finally {
      await sluice.knex.raw("SET GLOBAL sql_mode = 'NO_BACKSLASH_ESCAPES,STRICT_TRANS_TABLES'");
      await appKnex.destroy();
    }
  });
});
