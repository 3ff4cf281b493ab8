import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseMysqlUrl } from '../../src/db/parseMysqlUrl.ts';
import { startThrowawayServer, type ThrowawayServer } from '../../src/demo/server/throwawayServer.ts';
import { createSluice, OptionsError, type Sluice } from '../../src/index.ts';
import { testLogger } from '../helpers/testDatabase.ts';
import { makeTlsCertificates, type TlsCertificates } from '../helpers/tlsCertificates.ts';

/** A private server that accepts only TLS connections, its certificate signed by a throwaway CA. */
let server: ThrowawayServer;
let certs: TlsCertificates;
const opened: Sluice[] = [];

beforeAll(async () => {
  certs = await makeTlsCertificates();
  server = await startThrowawayServer({ extraArgs: [...certs.serverArgs, '--require-secure-transport=ON'] });
});

afterAll(async () => {
  await Promise.all(opened.map((s) => s.close()));
  await server?.stop();
  await certs?.remove();
});

function open(query: string): Sluice {
  const sluice = createSluice({ url: `${server.url}?${query}`, logger: testLogger });
  opened.push(sluice);
  return sluice;
}

async function cipher(sluice: Sluice): Promise<string> {
  const [rows] = (await sluice.knex.raw("SHOW SESSION STATUS LIKE 'Ssl_cipher'")) as [{ Value: string }[]];
  return rows[0]?.Value ?? '';
}

describe('TLS from the URL', () => {
  it('sslmode=verify_ca with sslca: an encrypted session that checked the server against the CA', async () => {
    const sluice = open(`sslmode=verify_ca&sslca=${encodeURIComponent(certs.caCertPath)}`);
    await sluice.migrate();
    expect(await cipher(sluice)).not.toBe('');
  });

  it('ssl=true verifies the server and its name (the certificate names 127.0.0.1)', async () => {
    const sluice = open(`ssl=true&sslca=${encodeURIComponent(certs.caCertPath)}`);
    expect(await cipher(sluice)).not.toBe('');
  });

  it('sslmode=required encrypts without verifying; verify_ca without the CA is refused', async () => {
    expect(await cipher(open('sslmode=required'))).not.toBe('');
    await expect(open('sslmode=verify_ca').queues.depth()).rejects.toThrow(/certificate/i);
  });

  it('no TLS parameter: a cleartext connection, which this server refuses', async () => {
    // MariaDB answers a cleartext login to a require_secure_transport server with "Access denied".
    const error = await open('')
      .queues.depth()
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'SLUICE_CONNECTION' });
    expect(String((error as Error).message)).toMatch(/access denied|secure transport/i);
  });

  it('an unknown or misspelt parameter is refused, naming the nearest known one, and nothing connects', () => {
    expect(() => createSluice({ url: `${server.url}?sslmod=REQUIRED`, logger: testLogger })).toThrow(OptionsError);
    expect(() => parseMysqlUrl(`${server.url}?sslmod=REQUIRED`)).toThrow(/sslmod \(did you mean sslmode\?\)/);
    expect(() => parseMysqlUrl(`${server.url}?sslmode=maybe`)).toThrow(/sslmode must be one of/);
    expect(() => parseMysqlUrl(`${server.url}?ssl=true&sslmode=disabled`)).toThrow(/contradict/);
    expect(() => parseMysqlUrl(`${server.url}?sslca=/nope.pem&ssl=true`)).toThrow(/cannot read \/nope.pem/);
    expect(parseMysqlUrl(server.url)).toMatchObject({ sslMode: 'disabled' });
    expect(parseMysqlUrl(server.url)).not.toHaveProperty('ssl');
  });
});
