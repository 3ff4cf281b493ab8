import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import mysql from 'mysql2/promise';
import { hasExited } from './spawnTiedToParent.ts';

const POLL_INTERVAL_MS = 100;

/** How root got in: the options that worked (plain TCP, or TLS when the server requires it), or why not. */
export type ServerLogin = { readonly ready: mysql.ConnectionOptions } | { readonly failure: string };

/** MySQL's refusal under require_secure_transport; MariaDB answers it with 1045 access denied. */
const ER_SECURE_TRANSPORT_REQUIRED = 3159;
const ER_ACCESS_DENIED = 1045;

/**
 * Polls until root logs in over TCP. A refused login is final (waiting will not change it) unless
 * the server only wants TLS (`--require-secure-transport`): then one TLS login decides. That login
 * does not verify the certificate: the peer is our own child on loopback, and checking the
 * certificate is the business of the clients being tested.
 */
export async function waitForServerLogin(child: ChildProcess, port: number, deadline: number): Promise<ServerLogin> {
  let lastError = 'no attempt made';
  for (;;) {
    if (hasExited(child)) return { failure: `the server exited during start (${describeExit(child)})` };
    const remainingMs = deadline - Date.now();
    if (remainingMs <= 0)
      return { failure: `the server did not answer on 127.0.0.1:${port} before the deadline (${lastError})` };
    const plain = {
      host: '127.0.0.1',
      port,
      user: 'root',
      connectTimeout: Math.max(100, Math.min(2_000, remainingMs)),
    };
    try {
      await ping(plain);
      return { ready: plain };
    } catch (error) {
      const { errno, message } = error as { errno?: number; message: string };
      if (errno === ER_ACCESS_DENIED || errno === ER_SECURE_TRANSPORT_REQUIRED) {
        const tls = { ...plain, ssl: { rejectUnauthorized: false } };
        try {
          await ping(tls);
          return { ready: tls };
        } catch (tlsError) {
          return {
            failure: `the server refused root over TCP: ${message} (and over TLS: ${(tlsError as Error).message})`,
          };
        }
      }
      lastError = message;
    }
    await sleep(POLL_INTERVAL_MS);
  }
}

async function ping(options: mysql.ConnectionOptions): Promise<void> {
  const connection = await mysql.createConnection(options);
  try {
    await connection.ping();
  } finally {
    await connection.end();
  }
}

function describeExit(child: ChildProcess): string {
  if (child.pid === undefined) return 'it could not be spawned';
  return child.signalCode ? `signal ${child.signalCode}` : `exit code ${child.exitCode}`;
}
