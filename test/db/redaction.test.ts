import { describe, expect, it } from 'vitest';
import { redactUrl } from '../../src/db/redactUrl.ts';
import { ConnectionError, createSluice, OptionsError } from '../../src/index.ts';
import { runCli } from '../helpers/runCli.ts';
import { testLogger } from '../helpers/testDatabase.ts';

const SECRET = 's3cret-Pa55';

describe('the connection password never reaches an error or a log line', () => {
  it('redactUrl masks the password and keeps the rest', () => {
    expect(redactUrl(`mysql://app:${SECRET}@db.example:3306/shop`)).toBe('mysql://app:***@db.example:3306/shop');
    expect(redactUrl('mysql://root@127.0.0.1:3306/test')).toBe('mysql://root@127.0.0.1:3306/test');
  });

  it('redactUrl masks every parameter that may carry a secret, and keeps the others', () => {
    expect(redactUrl(`mysql://app@db/shop?password=${SECRET}&sslmode=required&token=t0k&sslkey=/k.pem`)).toBe(
      'mysql://app@db/shop?password=***&sslmode=required&token=***&sslkey=***',
    );
    expect(redactUrl('not a url')).toBe('<unparseable url>');
  });

  it('MYSQL_URL_FILE: the URL read from a file, so the password stays out of the environment', async () => {
    const { mkdtemp, writeFile, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { resolveUrl } = await import('../../src/db/connect.ts');
    const dir = await mkdtemp(join(tmpdir(), 'sluice-url-'));
    const saved = { url: process.env.MYSQL_URL, file: process.env.MYSQL_URL_FILE };
    try {
      await writeFile(join(dir, 'url'), `mysql://app:${SECRET}@db:3306/shop\n`, { mode: 0o600 });
      delete process.env.MYSQL_URL;
      process.env.MYSQL_URL_FILE = join(dir, 'url');
      expect(resolveUrl()).toBe(`mysql://app:${SECRET}@db:3306/shop`);
      process.env.MYSQL_URL_FILE = join(dir, 'missing');
      expect(() => resolveUrl()).toThrow(OptionsError);
    } finally {
      if (saved.url === undefined) delete process.env.MYSQL_URL;
      else process.env.MYSQL_URL = saved.url;
      if (saved.file === undefined) delete process.env.MYSQL_URL_FILE;
      else process.env.MYSQL_URL_FILE = saved.file;
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a server that cannot be reached gives a ConnectionError that names the URL without the password and says how to fix it', async () => {
    const sluice = createSluice({ url: `mysql://app:${SECRET}@127.0.0.1:1/shop`, logger: testLogger });
    const error = await sluice.queues.depth().catch((e: unknown) => e);
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
    const { code, stdout, stderr } = await runCli(['stats', '--url', `mysql://app:${SECRET}@127.0.0.1:1/shop`]);
    expect(code).toBe(1);
    expect(`${stdout}${stderr}`).not.toContain(SECRET);
    expect(stderr).toContain('SLUICE_CONNECTION');
  });
});
