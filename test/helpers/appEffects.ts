import { beforeAll } from 'vitest';
import type { TestDatabase } from './testDatabase.ts';

/** One write a handler made to the application's own table: which job, in which attempt. */
export interface AppEffect {
  readonly job_id: number;
  readonly attempt: number;
}

/**
 * The application's own table, app_effects, that delivery-mode handlers write their effects to
 * (created once per file; the test database empties it before each test). Returns the reader of
 * its rows in write order.
 */
export function useAppEffects(db: TestDatabase): () => Promise<AppEffect[]> {
  beforeAll(async () => {
    await db.query(`CREATE TABLE IF NOT EXISTS app_effects (
      id      BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
      job_id  BIGINT UNSIGNED NOT NULL,
      attempt INT NOT NULL
    ) ENGINE=InnoDB`);
  });
  return async () => {
    const rows = await db.query<{ job_id: number; attempt: number }>(
      'SELECT job_id, attempt FROM app_effects ORDER BY id',
    );
    return rows.map((r) => ({ job_id: Number(r.job_id), attempt: Number(r.attempt) }));
  };
}
