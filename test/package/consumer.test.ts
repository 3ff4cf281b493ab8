import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installPackedApp, type PackedApp } from '../helpers/packedApp.ts';
import { ROOT } from '../helpers/sourceCli.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { writeAppFiles } from './appFiles.ts';

const execFileP = promisify(execFile);
const db = useTestDatabase('consumer');
const TSC = join(ROOT, 'node_modules', '.bin', 'tsc');
const PM2 = join(ROOT, 'node_modules', '.bin', 'pm2');
const REFUSE_HEAVY = fileURLToPath(new URL('../fixtures/scripts/refuseHeavyModules.mjs', import.meta.url));
const REFUSE_DEV_TOOLING = fileURLToPath(new URL('../fixtures/scripts/refuseDevTooling.mjs', import.meta.url));

let app: PackedApp;
let pm2Home: string | undefined;
const children: ChildProcess[] = [];

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a command in the app folder to its end; never throws on a non-zero exit. */
async function inApp(command: string, args: readonly string[], env: Record<string, string> = {}): Promise<Run> {
  try {
    const { stdout, stderr } = await execFileP(command, [...args], {
      cwd: app.dir,
      env: { ...process.env, MYSQL_URL: db.url, LOG_LEVEL: 'warn', ...env },
      timeout: 120_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** A long-running process in the app folder, its stdout collected. */
function startInApp(command: string, args: readonly string[]): { child: ChildProcess; stdout: () => string } {
  const child = spawn(command, [...args], {
    cwd: app.dir,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, MYSQL_URL: db.url, LOG_LEVEL: 'info' },
  });
  children.push(child);
  let out = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  return { child, stdout: () => out };
}

function exitOf(child: ChildProcess): Promise<number | null> {
  return child.exitCode !== null ? Promise.resolve(child.exitCode) : new Promise((r) => child.on('close', r));
}

async function greetings(): Promise<{ runs: number; jobs: number; pids: number }> {
  const [row] = await db.query<Record<string, number>>(
    'SELECT COUNT(*) AS runs, COUNT(DISTINCT job_id) AS jobs, COUNT(DISTINCT pid) AS pids FROM app_greetings',
  );
  return { runs: Number(row?.runs), jobs: Number(row?.jobs), pids: Number(row?.pids) };
}

beforeAll(async () => {
  app = await installPackedApp();
  writeAppFiles(app.dir);
}, 300_000);

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  if (pm2Home) {
    await execFileP(PM2, ['kill'], { env: { ...process.env, PM2_HOME: pm2Home } }).catch(() => undefined);
    await rm(pm2Home, { recursive: true, force: true });
  }
  if (app) {
    rmSync(app.dir, { recursive: true, force: true });
    rmSync(join(app.tarball, '..'), { recursive: true, force: true });
  }
});

/**
 * The package as an app gets it: built, packed and installed from the tarball (offline, from
 * npm's cache), then used from apps this test writes (appFiles.ts).
 */
describe('the packed package, installed into an app', () => {
  it('ships compiled JS, types, migrations, bin, README and LICENSE — no sources, tests or benches', async () => {
    const { stdout } = await execFileP('tar', ['-tzf', app.tarball]);
    const files = stdout.split('\n').filter(Boolean);
    expect(files).toEqual(expect.arrayContaining(['package/LICENSE', 'package/README.md', 'package/bin/sluice.js']));
    expect(files).toContain('package/dist/src/index.js');
    expect(files).toContain('package/dist/src/index.d.ts');
    expect(files).toContain('package/dist/src/index.js.map');
    expect(files.filter((f) => /^package\/dist\/migrations\/\d{12}_\w+\.js$/.test(f)).length).toBeGreaterThan(10);
    expect(files.filter((f) => /^package\/(src|test|bench|jobs)\//.test(f) || f.endsWith('.test.js'))).toEqual([]);
    expect(Object.keys(app.manifest.dependencies)).not.toContain('tsx');
    const installed = await readdir(join(app.dir, 'node_modules'));
    expect(installed).not.toContain('tsx');
    expect(installed).not.toContain('esbuild');
  });

  it('(a) a plain ESM app migrates, enqueues, runs a worker that completes the job, and stops on SIGINT', async () => {
    const run = startInApp(process.execPath, ['esm-app.mjs']);
    await waitFor(() => run.stdout().includes('"completed"'), { what: 'the job completed', timeoutMs: 60_000 });
    run.child.kill('SIGINT');
    expect(await exitOf(run.child), run.stdout()).toBe(0);
    expect(run.stdout()).toContain('{"stopped":"stopped"}');
  });

  it("(a) `import 'sluice'` loads no command, none of the demo or its throwaway server, and not sluice/testing", async () => {
    const run = await inApp(process.execPath, [
      '--import',
      REFUSE_DEV_TOOLING,
      '--input-type=module',
      '-e',
      "const sluice = await import('sluice'); console.log(typeof sluice.createSluice);",
    ]);
    expect(run.code, `import 'sluice' loads dist/src/cli, dist/src/demo or dist/src/testing:\n${run.stderr}`).toBe(0);
    expect(run.stdout.trim()).toBe('function');
  });

  it("(a) `import 'sluice/testing'` resolves to the built helpers", async () => {
    const run = await inApp(process.execPath, [
      '--input-type=module',
      '-e',
      "const t = await import('sluice/testing'); console.log(Object.keys(t).sort().join(' '));",
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe(
      'assertEnqueued createTestInstall drainQueues enqueuedJobs performJob refuteEnqueued',
    );
  });

  it('(b) a CommonJS app require()s the package', async () => {
    const run = await inApp(process.execPath, ['cjs-app.cjs']);
    expect(run.code, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout.trim().split('\n').pop() as string) as {
      id: number;
      stats: { queue: string; ready: { count: number; exact: boolean } };
      sluiceError: string;
    };
    expect(result.id).toBeGreaterThan(0);
    expect(result.stats).toMatchObject({ queue: 'reports', ready: { count: 1, exact: true } });
    expect(result.sluiceError).toBe('function');
  });

  it('(c) a TypeScript app type-checks under nodenext and bundler resolution with strict flags; a wrong payload is an error', async () => {
    const runs = await Promise.all(
      ['nodenext', 'bundler'].map((resolution) => inApp(TSC, ['-p', `ts/tsconfig.${resolution}.json`])),
    );
    // tsc reports an unused @ts-expect-error (TS2578): the wrong payloads below them must be errors.
    for (const run of runs) expect(run.code, `${run.stdout}${run.stderr}`).toBe(0);
  });

  it('(d) the installed CLI from the app folder: --version, migrate, work --jobs ./jobs, and a fast --help', async () => {
    const version = await inApp('npx', ['sluice', '--version']);
    expect(version.code, version.stderr).toBe(0);
    expect(version.stdout.trim()).toBe(app.manifest.version);

    const helpText = await inApp(process.execPath, [
      '--import',
      REFUSE_HEAVY,
      'node_modules/sluice/bin/sluice.js',
      '--help',
    ]);
    expect(helpText.code, `the help path imports knex, mysql2 or pino:\n${helpText.stderr}`).toBe(0);

    const migrate = await inApp('npx', ['sluice', 'migrate', '--prefix', 'app_']);
    expect(migrate.code, migrate.stderr).toBe(0);
    expect((await db.query("SHOW TABLES LIKE 'app\\_jobs'")).length).toBe(1);

    await db.query(
      'CREATE TABLE app_greetings (id BIGINT AUTO_INCREMENT PRIMARY KEY, job_id BIGINT NOT NULL, n INT NOT NULL, pid INT NOT NULL)',
    );
    const queue = db.open({ tablePrefix: 'app_' });
    const worker = startInApp(join(app.dir, 'node_modules', '.bin', 'sluice'), [
      'work',
      '--jobs',
      './jobs',
      '--prefix',
      'app_',
      '--queues',
      'cli',
    ]);
    await waitFor(() => worker.stdout().includes('"event":"worker:started"'), { what: 'worker started' });
    expect(worker.stdout()).toContain(`1 job type(s) from ${join(app.dir, 'jobs')} (greet)`);
    await queue.enqueue({ name: 'greet', queue: 'cli', payload: { n: 1 } });
    await waitFor(async () => (await greetings()).runs === 1, { what: 'the app’s job ran' });
    worker.child.kill('SIGINT');
    expect(await exitOf(worker.child), worker.stdout()).toBe(0);
  });

  it('(d) the installed `sluice dashboard` serves its pages and its own assets, uPlot included, from the package', async () => {
    const migrate = await inApp('npx', ['sluice', 'migrate', '--prefix', 'dash_']);
    expect(migrate.code, migrate.stderr).toBe(0);
    const dashboard = startInApp(join(app.dir, 'node_modules', '.bin', 'sluice'), [
      'dashboard',
      '--no-auth',
      '--port',
      '0',
      '--prefix',
      'dash_',
    ]);
    const line = await waitFor(
      () => dashboard.stdout().match(/"event":"dashboard:listening","host":"127\.0\.0\.1","port":(\d+)/),
      { what: 'the dashboard listening' },
    );
    const base = `http://127.0.0.1:${line[1]}`;
    const page = await (await fetch(`${base}/`)).text();
    expect(page).toContain('<h1>Overview</h1>');
    for (const asset of ['dashboard.js', 'dashboard.css', 'uPlot.iife.min.js', 'uPlot.min.css']) {
      const response = await fetch(`${base}/assets/${asset}`);
      expect(response.status, asset).toBe(200);
      expect((await response.arrayBuffer()).byteLength, asset).toBeGreaterThan(1_000);
    }
    dashboard.child.kill('SIGINT');
    expect(await exitOf(dashboard.child), dashboard.stdout()).toBe(0);
  });

  it('(d) npx sluice demo from the app folder runs the package’s own demo job, not the app’s jobs/, and cleans up', async () => {
    const demo = await inApp('npx', ['sluice', 'demo', '--jobs-count', '300']);
    expect(demo.code, `${demo.stdout}${demo.stderr}`).toBe(0);
    expect(demo.stdout).toContain('OK: every one of 300 jobs ran exactly once; none is left.');
    const left = await db.query("SHOW TABLES LIKE 'sluice\\_demo\\_%'");
    expect(left).toEqual([]);
  });

  it('(d) a .ts job file runs where Node strips types, and otherwise says why in one line', async () => {
    const bin = join(app.dir, 'node_modules', '.bin', 'sluice');
    const args = ['work', '--jobs', './ts-jobs', '--prefix', 'app_', '--queues', 'ts'];
    if ((process as { features?: { typescript?: unknown } }).features?.typescript) {
      // Node 22.18+ and 23.6+: the installed worker loads typed.ts with no loader and runs its job.
      const queue = db.open({ tablePrefix: 'app_' });
      await queue.migrate();
      const { id } = await queue.enqueue({ name: 'typed', queue: 'ts', payload: { n: 7 } });
      const worker = startInApp(bin, args);
      expect(await queue.jobs.waitFor(id, { timeoutMs: 60_000 }), worker.stdout()).toBe(7);
      worker.child.kill('SIGINT');
      expect(await exitOf(worker.child), worker.stdout()).toBe(0);
      return;
    }
    const run = await inApp(bin, args);
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toContain(`${join(app.dir, 'ts-jobs', 'typed.ts')}: is TypeScript, which this Node`);
  });

  it('(d) `sluice init` writes an ecosystem file that the real pm2 starts from the app folder, draining a batch', async () => {
    const init = await inApp('npx', [
      'sluice',
      'init',
      '--jobs',
      'jobs',
      '--prefix',
      'app_',
      '--workers',
      '2',
      '--queues',
      'fleet',
    ]);
    expect(init.code, init.stderr).toBe(0);
    pm2Home = await mkdtemp(join(tmpdir(), 'sluice-app-pm2-'));
    const pm2 = (...args: string[]) => inApp(PM2, [...args, '--no-color'], { PM2_HOME: pm2Home as string });
    await db.query('TRUNCATE TABLE app_greetings');
    const queue = db.open({ tablePrefix: 'app_' });
    await queue.enqueueBatch(
      Array.from({ length: 500 }, (_, n) => ({ name: 'greet', queue: 'fleet', payload: { n } })),
    );

    const started = await pm2('start', 'ecosystem.config.cjs');
    expect(started.code, started.stderr).toBe(0);
    const list = JSON.parse((await pm2('jlist')).stdout) as {
      name: string;
      pm2_env: { status: string; args?: string[] };
    }[];
    expect(list.filter((p) => p.name === 'sluice-worker' && p.pm2_env.status === 'online')).toHaveLength(2);
    expect(list.filter((p) => p.name === 'sluice-maintenance' && p.pm2_env.status === 'online')).toHaveLength(1);
    for (const p of list) expect(JSON.stringify(p.pm2_env.args ?? [])).not.toContain(db.url);

    const left = async () => {
      const [stats] = await queue.queues.depth({ queue: 'fleet' });
      return stats ? stats.ready.count + stats.running.count + stats.notDue.count : 0;
    };
    await waitFor(async () => (await left()) === 0, { what: 'the fleet drained the batch', timeoutMs: 120_000 });
    expect(await greetings()).toMatchObject({ runs: 500, jobs: 500 });
    const stopped = await pm2('stop', 'ecosystem.config.cjs');
    expect(stopped.code, stopped.stderr).toBe(0);
  });
});
