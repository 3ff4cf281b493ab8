import { readFileSync } from 'node:fs';
import { OptionsError } from '../errors.ts';
import { nearestName } from '../nearestName.ts';
import { redactUrl } from './redactUrl.ts';

/** How a connection is encrypted, by the names MySQL's own clients use for `--ssl-mode`. */
export type SslMode = 'disabled' | 'required' | 'verify_ca' | 'verify_identity';

/** What mysql2 needs to reach the server, read from a `mysql://` URL. */
export interface MysqlConnectionConfig {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly password: string;
  readonly database: string;
  readonly sslMode: SslMode;
  /** mysql2's `ssl` option, or undefined for a cleartext connection. */
  readonly ssl?: {
    ca?: string;
    cert?: string;
    key?: string;
    rejectUnauthorized: boolean;
    checkServerIdentity?: () => undefined;
  };
}

/**
 * The URL parameters sluice understands. Anything else is refused: a parameter silently dropped
 * (say `?ssl=true` misspelt) would connect in cleartext while its author believes otherwise.
 * - `sslmode`: disabled (the default), required (encrypted, server not verified), verify_ca (the
 *   server's certificate must chain to the CA), verify_identity (and name the host).
 * - `ssl=true`: verify_identity; `ssl=false`: disabled.
 * - `sslca`, `sslcert`, `sslkey`: paths of PEM files (the CA, a client certificate and its key).
 */
const PARAMS = ['sslmode', 'ssl', 'sslca', 'sslcert', 'sslkey'] as const;
const MODES: readonly SslMode[] = ['disabled', 'required', 'verify_ca', 'verify_identity'];

/** Reads a mysql:// URL (mariadb:// too); throws OptionsError saying what is wrong, never echoing the password. */
export function parseMysqlUrl(url: string): MysqlConnectionConfig {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new OptionsError('url', 'is not a URL (expected mysql://user:password@host:port/database)');
  }
  if (parsed.protocol !== 'mysql:' && parsed.protocol !== 'mariadb:') {
    throw new OptionsError('url', `must start with mysql:// (got ${parsed.protocol}//)`);
  }
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  if (!database) throw new OptionsError('url', `names no database: ${redactUrl(url)}`);
  const params = new Map<string, string>();
  for (const [name, value] of parsed.searchParams) {
    const key = name.toLowerCase();
    if (!(PARAMS as readonly string[]).includes(key)) {
      const nearest = nearestName(key, PARAMS);
      throw new OptionsError(
        'url',
        `has a parameter sluice does not know: ${name}${nearest ? ` (did you mean ${nearest}?)` : ''}; known: ${PARAMS.join(', ')}`,
      );
    }
    params.set(key, value);
  }
  const sslMode = sslModeOf(params);
  return {
    host: parsed.hostname,
    port: parsed.port ? Number(parsed.port) : 3306,
    user: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
    database,
    sslMode,
    ...(sslMode === 'disabled' ? {} : { ssl: sslOptions(sslMode, params) }),
  };
}

function sslModeOf(params: Map<string, string>): SslMode {
  const mode = params.get('sslmode')?.toLowerCase();
  const ssl = params.get('ssl')?.toLowerCase();
  if (ssl !== undefined && !['true', 'false', '1', '0'].includes(ssl)) {
    throw new OptionsError('url', `parameter ssl must be true or false (got ${JSON.stringify(ssl)})`);
  }
  if (mode !== undefined) {
    if (!(MODES as readonly string[]).includes(mode)) {
      throw new OptionsError(
        'url',
        `parameter sslmode must be one of ${MODES.join(', ')} (got ${JSON.stringify(mode)})`,
      );
    }
    if (ssl !== undefined && (ssl === 'false' || ssl === '0') !== (mode === 'disabled')) {
      throw new OptionsError('url', `parameters ssl=${ssl} and sslmode=${mode} contradict each other`);
    }
    return mode as SslMode;
  }
  if (ssl === 'true' || ssl === '1') return 'verify_identity';
  const filesGiven = ['sslca', 'sslcert', 'sslkey'].some((p) => params.has(p));
  if (filesGiven) throw new OptionsError('url', 'names TLS files (sslca, sslcert, sslkey) but no sslmode or ssl=true');
  return 'disabled';
}

function sslOptions(mode: SslMode, params: Map<string, string>): NonNullable<MysqlConnectionConfig['ssl']> {
  const file = (param: string) => {
    const path = params.get(param);
    if (path === undefined) return undefined;
    try {
      return readFileSync(path, 'utf8');
    } catch (error) {
      throw new OptionsError(
        'url',
        `parameter ${param}: cannot read ${path} (${(error as NodeJS.ErrnoException).code})`,
      );
    }
  };
  const ca = file('sslca');
  const cert = file('sslcert');
  const key = file('sslkey');
  return {
    ...(ca === undefined ? {} : { ca }),
    ...(cert === undefined ? {} : { cert }),
    ...(key === undefined ? {} : { key }),
    rejectUnauthorized: mode !== 'required',
    ...(mode === 'verify_ca' ? { checkServerIdentity: () => undefined } : {}),
  };
}
