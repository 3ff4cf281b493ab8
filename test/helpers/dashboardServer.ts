import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll } from 'vitest';
import type { DashboardOptions } from '../../src/dashboard/dashboardOptions.ts';
import type { Sluice } from '../../src/Sluice.ts';

/**
 * Serves `sluice.dashboard(options)` from a real http server on a free loopback port for the
 * file, the way an app mounts it (`sluice` is read in beforeAll, once the database is ready).
 * `url` is the dashboard's address, basePath included.
 */
export function useDashboard(sluice: () => Sluice, options: DashboardOptions): { readonly url: string } {
  let server: Server | undefined;
  let url = '';
  beforeAll(async () => {
    const handler = sluice().dashboard(options);
    server = createServer((req, res) => handler(req, res));
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${options.basePath ?? ''}`;
  });
  afterAll(
    () =>
      new Promise<void>((resolve) => {
        if (!server) return resolve();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return {
    get url() {
      return url;
    },
  };
}
