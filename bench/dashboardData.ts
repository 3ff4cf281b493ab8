/**
 * The dashboard benchmark's data: its own database (`sluice_bench_dashboard`, dropped and made
 * again each run, so it never meets another benchmark's tables) holding 1,000,000 live jobs over
 * four queues and three priorities — 90% due, 9% delayed, 1% retrying, 200 running — plus
 * 50,000 finished jobs in the history over the last day, 5,000 dead jobs and 20 batches. Rows are
 * made by the server from a digits cross join (MySQL and MariaDB alike), 100,000 per statement.
 */
import { createConnection } from 'mysql2/promise';
import { pino } from 'pino';
import { createSluice, type Sluice } from 'sluice';
import { progress } from './progress.ts';

export const LIVE_JOBS = 1_000_000;
const CHUNK = 100_000;
const DIGITS =
  '(SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)';
/** 0 … 99,999. */
const SEQ = `(SELECT a.d + 10 * b.d + 100 * c.d + 1000 * e.d + 10000 * f.d AS n FROM ${DIGITS} a, ${DIGITS} b, ${DIGITS} c, ${DIGITS} e, ${DIGITS} f)`;

export async function openDashboardBench(): Promise<{ url: string; sluice: Sluice }> {
  const server = new URL(process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test');
  const url = new URL(server.toString());
  url.pathname = '/sluice_bench_dashboard';
  server.pathname = '/';
  const admin = await createConnection({ uri: server.toString() });
  await admin.query('DROP DATABASE IF EXISTS sluice_bench_dashboard');
  await admin.query('CREATE DATABASE sluice_bench_dashboard CHARACTER SET utf8mb4 COLLATE utf8mb4_bin');
  await admin.end();
  const sluice = createSluice({ url: url.toString(), logger: pino({ level: 'warn' }, pino.destination(2)) });
  await sluice.migrate();
  return { url: url.toString(), sluice };
}

export async function loadData(sluice: Sluice): Promise<void> {
  const t = sluice.tables;
  const raw = (sql: string) => sluice.knex.raw(sql);
  for (let base = 0; base < LIVE_JOBS; base += CHUNK) {
    await raw(`
INSERT INTO ${t.jobs} (queue, name, payload, priority, run_at, retry_times, batch_id, created_at)
SELECT ELT(1 + (s.n % 4), 'default', 'mail', 'reports', 'billing'),
       ELT(1 + (s.n % 3), 'send-email', 'render-pdf', 'charge'),
       CONCAT('{"n":', ${base} + s.n, ',"to":"user', s.n, '@example.com"}'),
       s.n % 3,
       CASE WHEN s.n % 100 < 90 THEN NOW(3) - INTERVAL (s.n % 3600) SECOND ELSE NOW(3) + INTERVAL (1 + s.n % 86400) SECOND END,
       IF(s.n % 100 = 99, 1, 0),
       IF(${base} + s.n < 20000, 1 + (${base} + s.n) DIV 1000, NULL),
       NOW(3) - INTERVAL 1 HOUR
FROM ${SEQ} s`);
    progress(`  dashboard: ${(base + CHUNK).toLocaleString('en-US')} live jobs`);
  }
  await raw(
    `INSERT INTO ${t.batches} (id, size, created_at) SELECT n + 1, 1000, NOW(3) - INTERVAL 1 HOUR FROM ${SEQ} s WHERE n < 20`,
  );
  await raw(`
UPDATE ${t.jobs}
SET lock_id = CONCAT('tok', id % 4, '.1'), locked_at = NOW(3)
WHERE id <= 200`);
  await raw(`
INSERT INTO ${t.jobHistory} (job_id, queue, name, payload, retry_times, created_at, finished_at, result)
SELECT 2000000 + s.n, ELT(1 + (s.n % 4), 'default', 'mail', 'reports', 'billing'), 'send-email', '{}', 0,
       NOW(3) - INTERVAL 1 DAY, NOW(3) - INTERVAL (s.n * 1.7) SECOND, '{"ok":true}'
FROM ${SEQ} s WHERE s.n < 50000`);
  await raw(`
INSERT INTO ${t.deadJobs} (id, queue, name, payload, priority, retry_times, max_retries, last_error, created_at, failed_at)
SELECT 3000000 + s.n, ELT(1 + (s.n % 4), 'default', 'mail', 'reports', 'billing'), 'charge', '{}', 0, 4, 3,
       'Error: card declined\n    at charge (jobs/charge.js:12:11)', NOW(3) - INTERVAL 1 DAY, NOW(3) - INTERVAL (s.n * 10) SECOND
FROM ${SEQ} s WHERE s.n < 5000`);
  for (const table of [t.jobs, t.jobHistory, t.deadJobs]) await raw(`ANALYZE TABLE ${table}`);
}
