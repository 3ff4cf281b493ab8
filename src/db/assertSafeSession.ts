import { OptionsError } from '../errors.ts';

/** Params: none. The session settings that decide whether client-side escaping is sound. */
const SQL_SESSION_SETTINGS = `
SELECT @@SESSION.sql_mode AS sql_mode,
       @@SESSION.character_set_client AS charset`;

/** What the check reads through: an Executor's select (executor.ts wraps the connection it checks). */
export interface SessionReader {
  select<T>(sql: string, params?: readonly unknown[]): Promise<T[]>;
}

/**
 * Refuses an application's connection on which sluice's values would not be escaped soundly.
 * mysql2 escapes on the client, with backslashes, assuming a UTF-8 session: with NO_BACKSLASH_ESCAPES
 * in the session's sql_mode a crafted value can close its string literal early (an injection), and
 * a multi-byte character set other than utf8mb4 can swallow an escaping backslash. sluice's own
 * pool pins its sessions (connect.ts); an application's knex or transaction is checked here
 * before sluice writes through it.
 */
export async function assertSafeSession(db: SessionReader, what: string): Promise<void> {
  const [row] = await db.select<{ sql_mode: string; charset: string }>(SQL_SESSION_SETTINGS);
  const modes = String(row?.sql_mode ?? '').split(',');
  if (modes.includes('NO_BACKSLASH_ESCAPES')) {
    throw new OptionsError(
      what,
      "runs sessions with sql_mode NO_BACKSLASH_ESCAPES, under which sluice's escaped values are not safe: " +
        "remove it from that connection's sql_mode (e.g. in the pool's afterCreate), or let sluice open its own pool (url)",
    );
  }
  if (row?.charset !== 'utf8mb4') {
    throw new OptionsError(
      what,
      `runs sessions with character set ${row?.charset}; sluice needs utf8mb4 (set charset: 'utf8mb4' in the connection)`,
    );
  }
}
