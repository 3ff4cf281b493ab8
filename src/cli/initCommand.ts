import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { WORKER_DEFAULTS } from '../worker/workerOptions.ts';
import { CommandError } from './CommandError.ts';
import { packageVersion } from './packageVersion.ts';
import { help, intFlag, listFlag, parse } from './parse.ts';
import { UsageError } from './UsageError.ts';

const FILE = 'ecosystem.config.cjs';
const D = WORKER_DEFAULTS;

export const INIT_HELP = `sluice init: write ${FILE} into the current folder (your app): PM2 apps that run the
installed sluice with this app's jobs folder — a fleet of workers and exactly one maintenance
process. Start it with: MYSQL_URL=mysql://user:password@host:3306/db pm2 start ${FILE}
(the URL reaches the processes through the environment, never their arguments).

  --jobs DIR          the app's jobs folder, relative to this folder (default: ${D.jobs})
  --workers N         worker processes (default: 2; SLUICE_WORKERS at pm2 start wins)
  --queues a,b        queues the workers claim from (default: ${D.queues.join(',')}; SLUICE_QUEUES wins)
  --concurrency N     jobs at once per worker (default: ${D.concurrency}; SLUICE_CONCURRENCY wins)
  --force             overwrite an existing ${FILE}
  -h, --help          this text`;

export async function initCommand(argv: string[]): Promise<number> {
  const { values: v } = parse(argv, {
    jobs: { type: 'string' },
    workers: { type: 'string' },
    queues: { type: 'string' },
    concurrency: { type: 'string' },
    force: { type: 'boolean' },
  });
  if (v.help) return help(INIT_HELP);
  if (v.url !== undefined) throw new UsageError(`takes no --url: ${FILE} reads MYSQL_URL when pm2 starts it`);
  const target = resolve(FILE);
  if (existsSync(target) && !v.force) throw new CommandError(`${target} exists; --force overwrites it`);
  const jobs = relative(process.cwd(), resolve(v.jobs ?? D.jobs)) || '.';
  if (!existsSync(resolve(jobs))) {
    // A folder named on purpose that is not there is a typo; the default may be made later.
    if (v.jobs !== undefined) throw new UsageError(`--jobs ${resolve(jobs)} is not a folder`);
    process.stderr.write(
      `sluice init: note: ${resolve(jobs)} does not exist yet; the workers load their jobs from it\n`,
    );
  } else refuseUnloadableTypeScript(resolve(jobs));
  const settings = {
    jobs,
    workers: intFlag('workers', v.workers, 1) ?? 2,
    queues: (listFlag(v.queues) ?? [...D.queues]).join(','),
    concurrency: intFlag('concurrency', v.concurrency, 1) ?? D.concurrency,
    prefix: v.prefix,
  };
  writeFileSync(target, ecosystemFile(settings));
  process.stdout.write(
    `wrote ${target}: ${settings.workers} workers on ./${jobs} (queues ${settings.queues}) and 1 maintenance process
next:
  export MYSQL_URL=mysql://user:password@host:3306/database
  npx sluice migrate
  pm2 start ${FILE}          # pm2 reload sluice-worker: graceful; pm2 stop ${FILE}
`,
  );
  return 0;
}

/**
 * PM2 runs the workers on this Node with no loader: a folder of .ts job files it cannot load would
 * be a fleet that crash-loops. Node strips types by itself from 22.18 and 23.6 on
 * (`process.features.typescript`).
 */
function refuseUnloadableTypeScript(folder: string): void {
  if ((process.features as { typescript?: unknown }).typescript) return;
  const typescript = readdirSync(folder).find((f) => /\.m?ts$/.test(f) && !/\.d\.m?ts$/.test(f));
  if (typescript === undefined) return;
  throw new CommandError(
    `${join(folder, typescript)} is TypeScript, which this Node (${process.version}) cannot load without a loader, ` +
      'and PM2 starts the workers with none: point --jobs at the compiled .js folder, or use Node 22.18+ (it strips types)',
  );
}

interface Settings {
  readonly jobs: string;
  readonly workers: number;
  readonly queues: string;
  readonly concurrency: number;
  readonly prefix: string | undefined;
}

/** The file `sluice init` writes: CommonJS, so it loads whatever the app's package.json "type" says. */
export function ecosystemFile(s: Settings): string {
  const prefix = s.prefix === undefined ? '' : `, '--prefix', ${JSON.stringify(s.prefix)}`;
  return `// PM2 apps for sluice, written by \`sluice init\` (sluice ${packageVersion()}): workers on this app's
// jobs folder and exactly one maintenance process, both running the installed sluice.
//
//   MYSQL_URL=mysql://user:password@host:3306/database pm2 start ${FILE}
//
// The URL reaches the processes through the environment (MYSQL_URL), never their arguments, which
// every user of the host can read with ps. PM2 stops a process with SIGINT, then SIGKILL after
// kill_timeout: a worker drains for up to SHUTDOWN_TIMEOUT_MS, releases what still runs and exits
// 0, so kill_timeout is longer. wait_ready waits for the 'ready' each process sends once started.
const path = require('node:path');

const SLUICE = path.join(path.dirname(require.resolve('sluice/package.json', { paths: [__dirname] })), 'bin', 'sluice.js');
const JOBS = process.env.SLUICE_JOBS || path.join(__dirname, ${JSON.stringify(s.jobs)});
const WORKERS = Number(process.env.SLUICE_WORKERS || ${s.workers});
const QUEUES = process.env.SLUICE_QUEUES || ${JSON.stringify(s.queues)};
const CONCURRENCY = process.env.SLUICE_CONCURRENCY || '${s.concurrency}';
const SHUTDOWN_TIMEOUT_MS = ${D.shutdownTimeoutMs};

module.exports = {
  apps: [
    {
      name: 'sluice-worker',
      cwd: __dirname,
      script: SLUICE,
      args: ['work', '--jobs', JOBS, '--queues', QUEUES, '--concurrency', CONCURRENCY, '--shutdown-timeout-ms', String(SHUTDOWN_TIMEOUT_MS)${prefix}],
      exec_mode: 'fork',
      instances: WORKERS,
      wait_ready: true,
      listen_timeout: 20000,
      kill_timeout: SHUTDOWN_TIMEOUT_MS + 5000,
      autorestart: true,
      max_restarts: 20,
      min_uptime: 5000,
      exp_backoff_restart_delay: 200,
    },
    {
      name: 'sluice-maintenance',
      cwd: __dirname,
      script: SLUICE,
      args: ['maintenance', '--jobs', JOBS${prefix}],
      exec_mode: 'fork',
      instances: 1,
      wait_ready: true,
      listen_timeout: 20000,
      kill_timeout: 10000,
      autorestart: true,
      exp_backoff_restart_delay: 200,
    },
  ],
};
`;
}
