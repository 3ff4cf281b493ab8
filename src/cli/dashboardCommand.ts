import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { stopOnSignals } from '../shutdown.ts';
import { jobsFolder } from './jobsFolder.ts';
import { openSluice } from './openSluice.ts';
import { COMMON_HELP, help, parse, portFlag } from './parse.ts';
import { UsageError } from './UsageError.ts';

const DEFAULT_PORT = 4000;

export const DASHBOARD_HELP = `sluice dashboard: serve the web dashboard until SIGINT/SIGTERM

  --port N              port, 0–65535 (default: ${DEFAULT_PORT}; 0 picks a free one)
  --host H              address to bind (default: 127.0.0.1; anything else exposes it beyond this machine)
  --user NAME           basic-auth user (default: SLUICE_DASHBOARD_USER)
  --password-file F     file holding the basic-auth password (default: SLUICE_DASHBOARD_PASSWORD);
                        never a flag of its own: flags are visible in ps
  --no-auth             serve anyone who can reach the port (must be said explicitly)
  --read-only           show no action and refuse every POST
  --base-path P         serve under this path, e.g. /sluice (default: the root)
  --jobs DIR            job files whose schedules the schedules page shows (default: SLUICE_JOBS,
                        then ./jobs when it exists)
${COMMON_HELP}`;

export async function dashboardCommand(argv: string[]): Promise<number> {
  const { values: v } = parse(argv, {
    port: { type: 'string' },
    host: { type: 'string' },
    user: { type: 'string' },
    'password-file': { type: 'string' },
    'no-auth': { type: 'boolean' },
    'read-only': { type: 'boolean' },
    'base-path': { type: 'string' },
    jobs: { type: 'string' },
  });
  if (v.help) return help(DASHBOARD_HELP);
  const port = portFlag('port', v.port) ?? DEFAULT_PORT;
  const host = v.host ?? '127.0.0.1';
  const credentials = await credentialsOf(v);
  const folder = jobsFolder(v.jobs);
  if (folder.explicit && !folder.exists) throw new UsageError(`--jobs ${folder.path} is not a folder`);
  const sluice = await openSluice(v, { poolMax: 4 });
  try {
    const { basicAuth } = await import('../dashboard/basicAuth.ts');
    const handler = sluice.dashboard({
      auth: credentials === null ? false : basicAuth(credentials),
      readOnly: v['read-only'] === true,
      basePath: v['base-path'] ?? '',
      jobs: folder.exists ? folder.path : undefined,
    });
    const server = createServer(handler);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    const { port: bound } = server.address() as AddressInfo;
    const url = `http://${host.includes(':') ? `[${host}]` : host}:${bound}${v['base-path'] ?? ''}/`;
    sluice.logger.info(
      {
        event: 'dashboard:listening',
        host,
        port: bound,
        auth: credentials === null ? 'none' : 'basic',
        readOnly: v['read-only'] === true,
      },
      `dashboard on ${url}`,
    );
    if (credentials === null)
      sluice.logger.warn({ event: 'dashboard:no-auth' }, 'dashboard: --no-auth: anyone who reaches the port may act');
    process.send?.('ready');
    await stopOnSignals(
      {
        stop: () =>
          new Promise<void>((resolve) => {
            server.close(() => resolve());
            server.closeAllConnections();
          }),
      },
      sluice.logger,
    );
    return 0;
  } finally {
    await sluice.close();
  }
}

/** Basic-auth credentials from the flags and environment, null for --no-auth, or a UsageError saying what is missing. */
async function credentialsOf(v: {
  user?: string;
  'password-file'?: string;
  'no-auth'?: boolean;
}): Promise<{ user: string; password: string } | null> {
  const user = v.user ?? (process.env.SLUICE_DASHBOARD_USER || undefined);
  let password = process.env.SLUICE_DASHBOARD_PASSWORD || undefined;
  if (v['password-file'] !== undefined) {
    try {
      password = (await readFile(v['password-file'], 'utf8')).replace(/\r?\n$/, '');
    } catch (error) {
      throw new UsageError(
        `--password-file ${v['password-file']} cannot be read (${(error as NodeJS.ErrnoException).code})`,
      );
    }
  }
  if (v['no-auth']) {
    if (v.user !== undefined || v['password-file'] !== undefined)
      throw new UsageError('--no-auth cannot be combined with --user or --password-file');
    return null;
  }
  if (!user || !password) {
    throw new UsageError(
      `needs credentials: set SLUICE_DASHBOARD_USER and SLUICE_DASHBOARD_PASSWORD (or --user and --password-file), or pass --no-auth explicitly (missing: ${[!user && 'user', !password && 'password'].filter(Boolean).join(' and ')})`,
    );
  }
  if (user.includes(':')) throw new UsageError('--user must not contain ":"');
  return { user, password };
}
