import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createSluice, SluiceMetrics } from '../../src/index.ts';
import { testLogger, useTestDatabase } from '../helpers/testDatabase.ts';

const db = useTestDatabase('metrics_serving');

async function serve(metrics: SluiceMetrics, host?: string) {
  const server = await metrics.listen(0, host);
  const { address, port } = server.address() as AddressInfo;
  return {
    address,
    get: (path = '/metrics') => fetch(`http://127.0.0.1:${port}${path}`),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('the metrics endpoint', () => {
  it('binds loopback by default', async () => {
    const endpoint = await serve(new SluiceMetrics(db.open()));
    try {
      expect(endpoint.address).toBe('127.0.0.1');
    } finally {
      await endpoint.close();
    }
  });

  it('forty scrapes at once read the database once, and again only after the cache window', async () => {
    const sluice = db.open();
    let countQueries = 0;
    sluice.knex.on('query', (q: { sql: string }) => {
      // One registry read per rendering (the depth reads are several per queue).
      if (/FROM `sluice_workers`/.test(q.sql)) countQueries++;
    });
    const endpoint = await serve(new SluiceMetrics(sluice, 300));
    try {
      const responses = await Promise.all(Array.from({ length: 40 }, () => endpoint.get()));
      expect(responses.map((r) => r.status)).toEqual(Array(40).fill(200));
      await Promise.all(responses.map((r) => r.text()));
      expect(countQueries).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 400));
      await (await endpoint.get()).text();
      expect(countQueries).toBe(2);
    } finally {
      await endpoint.close();
    }
  });

  it('a database it cannot read answers a generic 500: no host, user, database or password', async () => {
    const broken = createSluice({ url: 'mysql://admin:s3cret@127.0.0.1:1/secretdb', logger: testLogger });
    const endpoint = await serve(new SluiceMetrics(broken));
    try {
      const response = await endpoint.get();
      expect(response.status).toBe(500);
      const body = await response.text();
      expect(body).toBe('sluice metrics: the database could not be read; see the log\n');
    } finally {
      await endpoint.close();
      await broken.close();
    }
  });
});
