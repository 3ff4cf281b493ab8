// The repo's own PM2 apps (an app that installed sluice writes its own with `npx sluice init`): a
// fleet of workers on the repo's jobs/ and exactly one maintenance process, run from the
// TypeScript sources through tsx, as `npm run sluice` does.
//
//   MYSQL_URL=mysql://user:pass@db:3306/app pm2 start ecosystem.config.js
//
// The URL reaches the processes through the environment, never their arguments (ps shows those).
// PM2 stops a process with SIGINT, then SIGKILL after kill_timeout (default 1600 ms). A worker
// drains for up to SHUTDOWN_TIMEOUT_MS, releases what is still running, and exits 0, so
// kill_timeout is set above that deadline. `wait_ready` waits for the process.send('ready')
// each command sends once it is started. PM2 loads this file with require(); on Node 20.19+
// that reads this ES module, and PM2 takes its named `apps` export.
const SHUTDOWN_TIMEOUT_MS = 10_000;
const WORKERS = Number(process.env.SLUICE_WORKERS ?? 2);
const CONCURRENCY = process.env.SLUICE_CONCURRENCY ?? '20';
const QUEUES = process.env.SLUICE_QUEUES ?? 'default';
const HERE = new URL('.', import.meta.url).pathname;
/** tsx loads the .ts sources; the sluice-source condition resolves jobs' `import 'sluice'` to src/. */
const FROM_SOURCE = {
  script: 'src/cli/sluice.ts',
  interpreter: 'node',
  node_args: ['--import', 'tsx', '--conditions=sluice-source'],
};

export const apps = [
  {
    name: 'sluice-worker',
    cwd: HERE,
    ...FROM_SOURCE,
    args: [
      'work',
      '--jobs',
      'jobs',
      '--queues',
      QUEUES,
      '--concurrency',
      CONCURRENCY,
      '--shutdown-timeout-ms',
      String(SHUTDOWN_TIMEOUT_MS),
    ],
    exec_mode: 'fork',
    instances: WORKERS,
    wait_ready: true,
    listen_timeout: 20_000,
    kill_timeout: SHUTDOWN_TIMEOUT_MS + 5_000,
    autorestart: true,
    max_restarts: 20,
    min_uptime: 5_000,
    exp_backoff_restart_delay: 200,
  },
  {
    name: 'sluice-maintenance',
    cwd: HERE,
    ...FROM_SOURCE,
    args: ['maintenance', '--jobs', 'jobs'],
    exec_mode: 'fork',
    instances: 1,
    wait_ready: true,
    listen_timeout: 20_000,
    kill_timeout: 10_000,
    autorestart: true,
    exp_backoff_restart_delay: 200,
  },
];

export default { apps };
