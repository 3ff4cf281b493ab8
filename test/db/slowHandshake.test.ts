import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createSluice } from '../../src/index.ts';
import { testLogger, useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * A server whose handshake comes late (a loaded host: SYNs past the listen backlog resent after
 * 1, 3 and 7 s, a thread slow to start) is waited for up to 20 s, not mysql2's 10 s: a proxy that
 * holds each new connection 12 s before it passes it to the real server.
 */
const db = useTestDatabase('slow_handshake');
const HOLD_MS = 12_000;

let proxy: Server | undefined;
const sockets = new Set<Socket>();
afterEach(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((resolve) => proxy?.close(resolve) ?? resolve(undefined));
});

describe('a slow handshake', () => {
  it('a connection whose server answers after 12 s is made, and used', async () => {
    const target = new URL(db.url);
    proxy = createServer((client) => {
      sockets.add(client);
      setTimeout(() => {
        const upstream = tcpConnect(Number(target.port || 3306), target.hostname);
        sockets.add(upstream);
        client.pipe(upstream).pipe(client);
        upstream.on('error', () => client.destroy());
        client.on('error', () => upstream.destroy());
      }, HOLD_MS);
    });
    await new Promise<void>((resolve) => proxy?.listen(0, '127.0.0.1', resolve));
    const url = new URL(db.url);
    url.hostname = '127.0.0.1';
    url.port = String((proxy.address() as { port: number }).port);
    const sluice = createSluice({ url: url.toString(), logger: testLogger, poolMax: 1 });
    try {
      const started = performance.now();
      const rows = await sluice.knex.raw('SELECT 1 AS one');
      expect((rows as [{ one: number }[]])[0][0]?.one).toBe(1);
      expect(performance.now() - started).toBeGreaterThanOrEqual(HOLD_MS - 100);
    } finally {
      await sluice.close();
    }
  }, 60_000);
});
