import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';

const run = promisify(execFile);
const PM2 = join(process.cwd(), 'node_modules', '.bin', 'pm2');
const db = useTestDatabase('pm2');
let pm2Home: string | undefined;

/**
 * The real PM2 with the real ecosystem.config.js: its own daemon (PM2_HOME in a temp folder),
 * 3 worker instances and the maintenance app against this file's database, draining the demo job
 * (jobs/demo.ts, the demo's job: one row per run in sluice_demo_runs).
 */
async function pm2(...args: string[]): Promise<string> {
  const { stdout } = await run(PM2, [...args, '--no-color'], {
    env: {
      ...process.env,
      PM2_HOME: pm2Home,
      MYSQL_URL: db.url,
      SLUICE_WORKERS: '3',
      SLUICE_QUEUES: 'demo',
      // Few at a time, so a reload and a stop/start meet jobs in flight (the queue's rate limit,
      // below, keeps the drain long enough for both).
      SLUICE_CONCURRENCY: '2',
      LOG_LEVEL: 'warn',
    },
    timeout: 90_000,
  });
  return stdout;
}

async function runs(): Promise<{ runs: number; jobs: number; pids: number }> {
  const [row] = await db.query<{ runs: number; jobs: number; pids: number }>(
    'SELECT COUNT(*) AS runs, COUNT(DISTINCT job_id) AS jobs, COUNT(DISTINCT pid) AS pids FROM sluice_demo_runs',
  );
  return { runs: Number(row?.runs), jobs: Number(row?.jobs), pids: Number(row?.pids) };
}

afterAll(async () => {
  if (!pm2Home) return;
  await pm2('kill').catch(() => undefined);
  await rm(pm2Home, { recursive: true, force: true });
});

describe('PM2 fleet (ecosystem.config.js)', () => {
  it('drains a 10,000-job batch through pm2 reload and pm2 stop/start mid-drain, losing and duplicating nothing', async () => {
    pm2Home = await mkdtemp(join(tmpdir(), 'sluice-pm2-'));
    await db.query(
      'CREATE TABLE sluice_demo_runs (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, job_id BIGINT UNSIGNED NOT NULL, n INT NOT NULL, pid INT NOT NULL, KEY ix_job (job_id)) ENGINE=InnoDB',
    );
    const { count } = await db.sluice.enqueueBatch(
      Array.from({ length: 10_000 }, (_, n) => ({ name: 'demo', queue: 'demo', payload: { n } })),
    );
    expect(count).toBe(10_000);
    // At most 500 starts a second, however fast the host: a reload of three instances (each started
    // through tsx, then told to drain) takes seconds, and a fast host once drained the whole batch
    // before the reloaded instances were ready.
    await db.sluice.queues.setLimits('demo', { rate: { limit: 100, intervalMs: 200 } });

    await pm2('start', 'ecosystem.config.js');
    const list = JSON.parse(await pm2('jlist')) as { name: string; pm2_env: { status: string } }[];
    expect(list.filter((p) => p.name === 'sluice-worker' && p.pm2_env.status === 'online')).toHaveLength(3);
    expect(list.filter((p) => p.name === 'sluice-maintenance' && p.pm2_env.status === 'online')).toHaveLength(1);

    await waitFor(async () => (await runs()).runs >= 1_000, { what: 'the fleet started draining', timeoutMs: 60_000 });
    await pm2('reload', 'sluice-worker'); // graceful: new instances ready first, old ones get SIGINT and drain
    await waitFor(async () => (await runs()).runs >= 4_000, { what: 'draining after the reload', timeoutMs: 60_000 });
    await pm2('stop', 'sluice-worker'); // SIGINT: finish or release, then exit 0 within kill_timeout
    const [claimed] = await db.query<{ n: number }>("SELECT COUNT(*) AS n FROM sluice_jobs WHERE lock_id <> ''");
    expect(Number(claimed?.n), 'claims left behind by stopped workers').toBe(0);
    const stoppedList = JSON.parse(await pm2('jlist')) as {
      name: string;
      pm2_env: { status: string; restart_time: number };
    }[];
    expect(stoppedList.filter((p) => p.name === 'sluice-worker').every((p) => p.pm2_env.status === 'stopped')).toBe(
      true,
    );

    await pm2('start', 'sluice-worker');
    await waitFor(async () => (await runs()).runs >= 10_000, { what: 'all 10,000 jobs run', timeoutMs: 120_000 });
    await waitFor(
      async () => Number((await db.query<{ n: number }>('SELECT COUNT(*) AS n FROM sluice_jobs'))[0]?.n) === 0,
      {
        what: 'the live table empty',
      },
    );
    const final = await runs();
    expect(final.runs).toBe(10_000);
    expect(final.jobs).toBe(10_000);
    expect(final.pids, 'reloaded and restarted instances did work').toBeGreaterThan(3);
    const [dead] = await db.query<{ n: number }>('SELECT COUNT(*) AS n FROM sluice_dead_jobs');
    expect(Number(dead?.n)).toBe(0);
    // No instance was killed by PM2 for overstaying kill_timeout: every exit was a clean drain.
    const after = JSON.parse(await pm2('jlist')) as { name: string; pm2_env: { unstable_restarts: number } }[];
    expect(after.every((p) => p.pm2_env.unstable_restarts === 0)).toBe(true);
  });
});
