import { describe, expect, it } from 'vitest';
import { createSluice } from '../../src/index.ts';
import { startTcpProxy } from '../helpers/tcpProxy.ts';
import { testLogger, useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * A server whose handshake comes late (a loaded host: SYNs past the listen backlog resent after
 * 1, 3 and 7 s, a thread slow to start) is waited for up to 20 s, not mysql2's 10 s: a proxy that
 * holds each new connection 12 s before it passes it to the real server.
 */
const db = useTestDatabase('slow_handshake');
const HOLD_MS = 12_000;

describe('a slow handshake', () => {
  it('a connection whose server answers after 12 s is made, and used', async () => {
    const proxy = await startTcpProxy(db.url, { holdMs: HOLD_MS });
    const sluice = createSluice({ url: proxy.url, logger: testLogger, poolMax: 1 });
    try {
      const started = performance.now();
      const rows = await sluice.knex.raw('SELECT 1 AS one');
      expect((rows as [{ one: number }[]])[0][0]?.one).toBe(1);
      expect(performance.now() - started).toBeGreaterThanOrEqual(HOLD_MS - 100);
    } finally {
      await sluice.close();
      await proxy.close();
    }
  }, 60_000);
});
