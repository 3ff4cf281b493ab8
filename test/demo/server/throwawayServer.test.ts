import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import mysql from 'mysql2/promise';
import { afterAll, describe, expect, it } from 'vitest';
import { ServerStartError } from '../../../src/demo/server/ServerStartError.ts';
import { startThrowawayServer, type ThrowawayServer } from '../../../src/demo/server/throwawayServer.ts';
import { isRunning } from '../../helpers/processState.ts';
import { makeTlsCertificates, type TlsCertificates } from '../../helpers/tlsCertificates.ts';
import { waitFor } from '../../helpers/waitFor.ts';

const OWNER_SCRIPT = fileURLToPath(new URL('../../fixtures/scripts/throwawayServerOwner.ts', import.meta.url));

/** Servers a failing test may have left running; the passing path stops each itself. */
const started: ThrowawayServer[] = [];
afterAll(async () => {
  await Promise.all(started.map((s) => s.stop()));
});

async function start(extraArgs: string[] = []): Promise<ThrowawayServer> {
  const server = await startThrowawayServer({ extraArgs });
  started.push(server);
  return server;
}

/** Pids of live processes whose command line mentions `text` (the server names its folder in its arguments). */
function processesMentioning(text: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(text) && isRunning(Number(pid));
      } catch {
        return false;
      }
    })
    .map(Number);
}

async function queryOne<T>(options: mysql.ConnectionOptions, sql: string): Promise<T> {
  const connection = await mysql.createConnection(options);
  try {
    const [rows] = await connection.query(sql);
    return (rows as T[])[0]!;
  } finally {
    await connection.end();
  }
}

describe('startThrowawayServer', () => {
  it('starts a server that answers at its URL; stop() ends the process and removes its folder, twice is fine', async () => {
    const server = await start();
    expect(server.url).toBe(`mysql://root@127.0.0.1:${server.port}/test`);
    const row = await queryOne<{ db: string; answer: number }>(
      { uri: server.url },
      'SELECT DATABASE() AS db, 6 * 7 AS answer',
    );
    expect(row).toEqual({ db: 'test', answer: 42 });
    expect(existsSync(server.dataDir)).toBe(true);
    expect(isRunning(server.pid)).toBe(true);

    await server.stop();
    expect(isRunning(server.pid)).toBe(false);
    expect(existsSync(server.dataDir)).toBe(false);
    await server.stop();
  });

  it('passes extra server arguments (sql_mode)', async () => {
    const server = await start(['--sql-mode=NO_BACKSLASH_ESCAPES']);
    const row = await queryOne<{ mode: string }>({ uri: server.url }, 'SELECT @@GLOBAL.sql_mode AS mode');
    expect(row.mode.split(',')).toContain('NO_BACKSLASH_ESCAPES');
    await server.stop();
  });

  describe('with TLS required', () => {
    let certificates: TlsCertificates | undefined;
    afterAll(async () => {
      await certificates?.remove();
    });

    it('accepts a client that verifies the server against the CA and refuses one without TLS', async () => {
      certificates = await makeTlsCertificates();
      const server = await start([...certificates.serverArgs, '--require-secure-transport=ON']);
      const { hostname, port } = new URL(server.url);
      const base = { host: hostname, port: Number(port), user: 'root', database: 'test' };

      const cipher = await queryOne<{ Value: string }>(
        { ...base, ssl: { ca: certificates.caCert } },
        "SHOW SESSION STATUS LIKE 'Ssl_cipher'",
      );
      expect(cipher.Value).not.toBe('');
      // The client really verifies: without our CA, the certificate is not trusted.
      await expect(queryOne({ ...base, ssl: {} }, 'SELECT 1')).rejects.toThrow(/certificate/i);
      // MySQL: 3159 ER_SECURE_TRANSPORT_REQUIRED; MariaDB: 1045 access denied.
      const refused = await queryOne(base, 'SELECT 1').catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(Error);
      expect([1045, 3159]).toContain((refused as { errno?: number }).errno);
      await server.stop();
    });
  });

  it('throws ServerStartError with the log tail on a bad argument, leaving no process or folder', async () => {
    const progress: string[] = [];
    const error = await startThrowawayServer({
      extraArgs: ['--no-such-option'],
      onProgress: (line) => progress.push(line),
    }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(ServerStartError);
    const startError = error as ServerStartError;
    expect(startError.code).toBe('SLUICE_SERVER_START');
    expect(startError.message).toMatch(/exited during start/);
    expect(startError.logTail).toMatch(/unknown (variable|option).*no-such-option/);
    expect(startError.message).toContain(startError.logTail);
    const dataDir = /\(data in (.+)\)$/.exec(progress.find((line) => line.includes('data in')) ?? '')?.[1];
    expect(dataDir).toBeDefined();
    expect(existsSync(dataDir!)).toBe(false);
    expect(processesMentioning(dataDir!)).toEqual([]);
  });

  it.each([
    ['exits normally without stopping it (exit hook)', 'exit'],
    ['is SIGKILLed (parent-death signal)', 'hang'],
  ])('does not outlive a parent that %s', async (_what, mode) => {
    const owner = execFile(process.execPath, ['--import', 'tsx', OWNER_SCRIPT, mode]);
    const firstLine = await new Promise<string>((resolve, reject) => {
      let out = '';
      owner.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('\n')) resolve(out.split('\n')[0]!);
      });
      owner.on('exit', (code) => reject(new Error(`owner exited (${code}) before printing: ${out}`)));
    });
    const { pid, dataDir } = JSON.parse(firstLine) as { pid: number; dataDir: string };
    const ownerGone = new Promise((resolve) => owner.on('exit', resolve));
    if (mode === 'hang') owner.kill('SIGKILL');
    await ownerGone;

    await waitFor(() => !isRunning(pid), { timeoutMs: 10_000, what: `server ${pid} gone` });
    // Only a hook can remove the folder; SIGKILL runs none, so the test removes it.
    if (mode === 'exit') expect(existsSync(dataDir)).toBe(false);
    else rmSync(dataDir, { recursive: true, force: true });
  });
});
