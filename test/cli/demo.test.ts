import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { freeLoopbackPort } from '../../src/demo/server/freeLoopbackPort.ts';
import { isRunning } from '../helpers/processState.ts';
import { SOURCE_CLI } from '../helpers/sourceCli.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';

const db = useTestDatabase('demo');

/**
 * An app folder with a jobs/ of its own, whose `demo` job would leave a marker file if it ever
 * ran: `sluice demo` must run its own job, never the app's (even with SLUICE_JOBS naming it).
 */
const app = mkdtempSync(join(tmpdir(), 'sluice-demo-app-'));
const MARKER = join(app, 'app-job-ran');
mkdirSync(join(app, 'jobs'));
writeFileSync(
  join(app, 'jobs', 'demo.mjs'),
  `import { writeFileSync } from 'node:fs';
export default { name: 'demo', handle() { writeFileSync(${JSON.stringify(MARKER)}, 'ran'); throw new Error('the app job ran'); } };
`,
);
afterAll(() => rmSync(app, { recursive: true, force: true }));

interface Demo {
  readonly child: ChildProcess;
  readonly stdout: () => string;
  readonly exited: Promise<number | null>;
  /** Resolves with the first stdout line that matches. */
  line(pattern: RegExp): Promise<string>;
}

const running: ChildProcess[] = [];
afterEach(() => {
  for (const child of running.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

/** `sluice demo <args>` from the sources, in the app folder (or `cwd`), with its output streamed. */
function startDemo(args: readonly string[], env: Record<string, string>, cwd = app): Demo {
  const child = spawn(process.execPath, [...SOURCE_CLI, 'demo', ...args], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
  });
  running.push(child);
  let out = '';
  let err = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return {
    child,
    stdout: () => `${out}\n--- stderr ---\n${err}`,
    exited,
    async line(pattern) {
      await waitFor(() => pattern.test(out), { what: `demo output ${pattern}`, timeoutMs: 90_000 });
      return out.split('\n').find((l) => pattern.test(l)) as string;
    },
  };
}

/** Pids of `3. started N worker processes (pids a, b) and 1 maintenance process (pid c)`. */
function pidsOf(line: string): number[] {
  return [...line.matchAll(/\d{2,}/g)].map((m) => Number(m[0]));
}

async function demoTables(): Promise<string[]> {
  const rows = await db.query<{ t: string }>(
    "SELECT table_name AS t FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE 'sluice\\_demo\\_%'",
  );
  return rows.map((r) => r.t);
}

describe('sluice demo', () => {
  it('runs its own job from an app folder (never the app’s jobs/), hands children the URL in the environment only, and drops its tables', async () => {
    // Slow enough (2 jobs at a time per worker) that its children are still there to look at.
    const demo = startDemo(['--jobs-count', '1500', '--concurrency', '2'], { MYSQL_URL: db.url, SLUICE_JOBS: 'jobs' });
    const started = await demo.line(/^3\. started/m);
    for (const pid of pidsOf(started)) {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      expect(argv.join(' '), 'the URL is not in a child’s arguments').not.toContain(db.url);
      expect(environ).toContain(`MYSQL_URL=${db.url}`);
      expect(argv).toContain('--jobs');
      expect(argv[argv.indexOf('--jobs') + 1]).not.toBe(join(app, 'jobs'));
    }
    expect(await demo.exited, demo.stdout()).toBe(0);
    expect(demo.stdout()).toContain('OK: every one of 1500 jobs ran exactly once; none is left.');
    // The progress line counts jobs (a count read as an object printed "[object Object] running").
    expect(demo.stdout()).toMatch(/\/1500 ran, \d+ running, \d+ dead, \d+ jobs\/s/);
    expect(existsSync(MARKER), 'the app’s own demo job ran').toBe(false);
    expect(await demoTables()).toEqual([]);
  });

  it('a failing drain says FAILED before any line claims success, stops its processes and cleans up', async () => {
    const demo = startDemo(['--jobs-count', '3000', '--workers', '1', '--concurrency', '2'], { MYSQL_URL: db.url });
    const started = await demo.line(/^3\. started/m);
    // The demo's jobs now fail: their handler's INSERT lacks a column that has no default.
    await db.query('ALTER TABLE sluice_demo_runs ADD COLUMN must_be_set INT NOT NULL');
    expect(await demo.exited, demo.stdout()).toBe(1);
    const out = demo.stdout();
    expect(out).toMatch(
      /FAILED: a job failed or a process reported an error: worker 1 \(pid \d+\): job \d+ \(demo\) failed/,
    );
    expect(out).not.toContain('3000/3000');
    expect(out).not.toContain('OK:');
    expect(out.indexOf('FAILED')).toBeLessThan(out.indexOf("5. dropped the demo's tables"));
    for (const pid of pidsOf(started)) expect(isRunning(pid), `child ${pid} still runs`).toBe(false);
    expect(await demoTables()).toEqual([]);
  });

  it('with nothing listening at the URL, starts a throwaway server, says so, and removes it afterwards (in a folder without jobs/)', async () => {
    const port = await freeLoopbackPort();
    const empty = mkdtempSync(join(tmpdir(), 'sluice-demo-empty-'));
    const demo = startDemo(['--jobs-count', '200'], { MYSQL_URL: `mysql://root@127.0.0.1:${port}/test` }, empty);
    const exited = await demo.exited;
    rmSync(empty, { recursive: true, force: true });
    expect(exited, demo.stdout()).toBe(0);
    const out = demo.stdout();
    expect(out).toContain(
      `nothing answers at mysql://root@127.0.0.1:${port}/test (ECONNREFUSED): starting a throwaway server`,
    );
    const dataDir = /started a throwaway (?:MariaDB|MySQL) server \(pid \d+, data in (\S+)\)/.exec(out)?.[1];
    expect(dataDir, out).toBeDefined();
    expect(out).toContain('OK: every one of 200 jobs ran exactly once; none is left.');
    expect(existsSync(dataDir as string), 'the throwaway server’s folder').toBe(false);
  });

  it('when no throwaway server can start either, prints the server’s own log tail before the one-line error', async () => {
    // A fake MariaDB whose initialisation fails, as mariadb-install-db once did in CI under load.
    const bin = mkdtempSync(join(tmpdir(), 'sluice-demo-bin-'));
    writeFileSync(join(bin, 'mariadbd'), '#!/bin/sh\necho "mariadbd  Ver 10.11.99-MariaDB (a fake)"\n', {
      mode: 0o755,
    });
    writeFileSync(
      join(bin, 'mariadb-install-db'),
      '#!/bin/sh\necho "Installation of system tables failed (a fake)" >&2\nexit 1\n',
      { mode: 0o755 },
    );
    const port = await freeLoopbackPort();
    const demo = startDemo(['--jobs-count', '10'], {
      MYSQL_URL: `mysql://root@127.0.0.1:${port}/test`,
      PATH: `${bin}:${process.env.PATH}`,
    });
    const exited = await demo.exited;
    rmSync(bin, { recursive: true, force: true });
    const out = demo.stdout();
    expect(exited, out).toBe(1);
    expect(out).toContain('exited with 1');
    expect(out).toMatch(/the throwaway server's log, last lines:\n\s+Installation of system tables failed \(a fake\)/);
    expect(out).toMatch(/sluice demo: nothing answers at .* no throwaway server could be started/);
  });
});
