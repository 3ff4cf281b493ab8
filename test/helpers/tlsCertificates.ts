import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A throwaway CA and a server certificate it signed, for a server on 127.0.0.1. */
export interface TlsCertificates {
  /** The folder holding every file below; `remove()` deletes it. */
  readonly dir: string;
  /** CA certificate (PEM): the server's `--ssl-ca`, the client's `ssl.ca`. */
  readonly caCertPath: string;
  /** Server certificate (PEM), CN=127.0.0.1 and subjectAltName IP:127.0.0.1: the server's `--ssl-cert`. */
  readonly serverCertPath: string;
  /** Server private key (PEM, unencrypted): the server's `--ssl-key`. */
  readonly serverKeyPath: string;
  /** The CA certificate's text, ready for mysql2's `ssl: { ca }`. */
  readonly caCert: string;
  /** The three server options, ready for `startThrowawayServer({ extraArgs })`. */
  readonly serverArgs: readonly string[];
  remove(): Promise<void>;
}

/**
 * Makes a CA and a server certificate with the `openssl` CLI in a temporary folder (valid two
 * days; RSA 2048, which every MySQL/MariaDB TLS library accepts). The client verifies the
 * server against the CA and the IP in the certificate, as a production client would.
 */
export async function makeTlsCertificates(): Promise<TlsCertificates> {
  const dir = await mkdtemp(join(tmpdir(), 'sluice-tls-'));
  const at = (name: string) => join(dir, name);
  try {
    await openssl([
      'req',
      ...['-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=sluice throwaway test CA'],
      ...['-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'],
      ...['-keyout', at('ca-key.pem'), '-out', at('ca-cert.pem')],
    ]);
    await openssl([
      'req',
      ...['-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1'],
      ...['-keyout', at('server-key.pem'), '-out', at('server.csr')],
    ]);
    await writeFile(
      at('server-ext.cnf'),
      'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\n' +
        'extendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1\n',
    );
    await openssl([
      'x509',
      ...['-req', '-in', at('server.csr'), '-days', '2', '-extfile', at('server-ext.cnf')],
      ...['-CA', at('ca-cert.pem'), '-CAkey', at('ca-key.pem'), '-CAcreateserial'],
      ...['-out', at('server-cert.pem')],
    ]);
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  const caCertPath = at('ca-cert.pem');
  const serverCertPath = at('server-cert.pem');
  const serverKeyPath = at('server-key.pem');
  return {
    dir,
    caCertPath,
    serverCertPath,
    serverKeyPath,
    caCert: await readFile(caCertPath, 'utf8'),
    serverArgs: [`--ssl-ca=${caCertPath}`, `--ssl-cert=${serverCertPath}`, `--ssl-key=${serverKeyPath}`],
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

async function openssl(args: string[]): Promise<void> {
  try {
    await run('openssl', args, { timeout: 30_000 });
  } catch (error) {
    const { stderr } = error as { stderr?: string };
    throw new Error(`openssl ${args[0]} failed: ${stderr?.trim() || (error as Error).message}`, { cause: error });
  }
}
