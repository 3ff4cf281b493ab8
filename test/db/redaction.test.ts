import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ConnectionError, createSluice, OptionsError } from '../../src/index.ts';
import { redactUrl } from '../../src/db/connect.ts';
import { testLogger } from '../helpers/testDatabase.ts';

const run = promisify(execFile);
const SECRET = 's3cret-Pa55';

describe('the connection password never reaches an error or a log line', () => {
  it('redactUrl masks the password and keeps the rest', () => {
    expect(redactUrl(`mysql://app:${SECRET}@db.example:3306/shop`)).toBe('mysql://app:***@db.example:3306/shop');
    expect(redactUrl('mysql://root@127.0.0.1:3306/test')).toBe('mysql://root@127.0.0.1:3306/test');
  });

  it('a server that cannot be reached gives a ConnectionError that names the URL without the password and says how to fix it', async () => {
    const sluice = createSluice({ url: `mysql://app:${SECRET}@127.0.0.1:1/shop`, logger: testLogger });
    const error = await sluice.stats().catch((e: unknown) => e);
    await sluice.close();
    expect(error).toBeInstanceOf(ConnectionError);
    const text = `${(error as Error).message}\n${(error as Error).stack}`;
    expect(text).not.toContain(SECRET);
    expect(text).toContain('mysql://app:***@127.0.0.1:1/shop');
    expect(text).toContain('MYSQL_URL');
  });

  it('a malformed URL is an OptionsError that does not echo the password', () => {
    const error = (() => {
      try {
        createSluice({ url: `postgres://app:${SECRET}@h/db`, logger: testLogger });
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(OptionsError);
    expect((error as Error).message).not.toContain(SECRET);
  });

  it('the CLI prints neither to stdout nor stderr the password of a URL it cannot use', async () => {
    const result = await run(process.execPath, ['bin/sluice.js', 'stats', '--url', `mysql://app:${SECRET}@127.0.0.1:1/shop`]).catch(
      (e: { stdout: string; stderr: string; code: number }) => e,
    );
    const { stdout, stderr } = result as { stdout: string; stderr: string };
    expect((result as { code?: number }).code).toBe(1);
    expect(`${stdout}${stderr}`).not.toContain(SECRET);
    expect(stderr).toContain('SLUICE_CONNECTION');
  });
});
