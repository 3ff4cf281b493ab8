import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { OptionsError } from '../errors.ts';
import { rejectUnknownKeys } from '../options.ts';
import type { DashboardAuth } from './dashboardOptions.ts';

const CREDENTIAL_KEYS = ['user', 'password', 'realm'];

/** The one operator basicAuth lets in. */
export interface BasicAuthCredentials {
  /** The user name asked for: not empty, no `:`. */
  readonly user: string;
  /** The password asked for: not empty. Read it from the environment or a secret store, never from the code. */
  readonly password: string;
  /** The realm the browser's prompt shows. @defaultValue `'sluice'` */
  readonly realm?: string;
}

/**
 * An auth hook for HTTP basic auth against one user and password: the operator's name when the
 * Authorization header carries them, else null (401 with a Basic challenge). Compared in constant
 * time (over SHA-256 digests, so lengths leak nothing either). Serve it over TLS (a reverse proxy)
 * beyond loopback: basic auth sends the password with every request.
 */
export function basicAuth(credentials: BasicAuthCredentials): DashboardAuth {
  rejectUnknownKeys('basicAuth', credentials, CREDENTIAL_KEYS);
  const { user, password } = credentials;
  if (typeof user !== 'string' || user === '' || user.includes(':'))
    throw new OptionsError('auth.user', 'must be a non-empty string without ":"');
  if (typeof password !== 'string' || password === '')
    throw new OptionsError('auth.password', 'must be a non-empty string');
  const expected = digest(`${user}:${password}`);
  const hook = (req: IncomingMessage): string | null => {
    const header = req.headers.authorization;
    if (!header?.startsWith('Basic ')) return null;
    const given = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
    return timingSafeEqual(digest(given), expected) ? user : null;
  };
  const realm = (credentials.realm ?? 'sluice').replace(/["\\]/g, '');
  return Object.assign(hook, { challenge: `Basic realm="${realm}", charset="UTF-8"` });
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
