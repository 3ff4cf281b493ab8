import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConnectionError } from '../../src/errors.ts';
import { createSluice } from '../../src/index.ts';
import { insertJob } from '../helpers/factory.ts';
import { runCli } from '../helpers/runCli.ts';
import { testLogger, useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * What the CLI prints for people: text from the database shown, never obeyed by the terminal;
 * no internal parking time; a held job says why; every mistake answered in sluice's words.
 */
const db = useTestDatabase('cli_terminal');
const app = mkdtempSync(join(tmpdir(), 'sluice-terminal-'));
afterAll(() => rmSync(app, { recursive: true, force: true }));

const jobs = (...args: string[]) => runCli(['jobs', ...args, '--url', db.url]);

/** ESC, a C1 CSI (U+009B), DEL and BEL: what clears a screen, titles a window or makes an OSC 8 link. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point
const RAW_CONTROL = /[\u001b\u009b\u007f\u0007]/;

describe('the terminal shows text from the database, never obeys it', () => {
  it('escapes control characters in jobs get, jobs list and their --json', async () => {
    const hostile = '\u001b[2J\u001b]0;owned\u0007\u001b]8;;http://evil.example/\u001b\\link\u009b31m\u007f';
    const id = await insertJob(db, {
      queue: 'q',
      name: 'n',
      idempotencyKey: `key${hostile}`,
      lastError: `Error: boom${hostile}\n    at here${hostile}`,
    });
    await db.query(
      `INSERT INTO sluice_job_logs (job_id, attempt, line, logged_at, message, fields, dropped)
       VALUES (?, 1, 1, NOW(3), ?, NULL, 0)`,
      [id, `log${hostile}`],
    );
    const get = await jobs('get', String(id));
    expect(get.code, get.stderr).toBe(0);
    expect(get.stdout).not.toMatch(RAW_CONTROL);
    expect(get.stdout).toContain('key\\x1b[2J\\x1b]0;owned\\x07');
    expect(get.stdout).toContain('\\x9b31m\\x7f');
    expect(get.stdout).toContain('log\\x1b[2J');
    const list = await jobs('list');
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).not.toMatch(RAW_CONTROL);
    expect(list.stdout).toContain('Error: boom\\x1b[2J');
    for (const json of [await jobs('get', String(id), '--json'), await jobs('list', '--json')]) {
      expect(json.stdout).not.toMatch(RAW_CONTROL);
      // Still the same JSON: the escapes decode to the stored text.
      expect(JSON.stringify(JSON.parse(json.stdout))).toContain('\\u001b[2J');
      expect(json.stdout).toContain('\\u009b31m\\u007f');
    }
  });

  it('shows a held job without the parking time, and says what holds it', async () => {
    await db.sluice.queues.setLimits('g', { groupConcurrency: 1 });
    await db.sluice.enqueueBatch([1, 2].map((n) => ({ name: 'x', queue: 'g', payload: { n }, group: 'acct' })));
    const [, held] = (await db.query<{ id: number }>("SELECT id FROM sluice_jobs WHERE queue = 'g' ORDER BY id")).map(
      (r) => Number(r.id),
    );
    const get = await jobs('get', String(held));
    expect(get.code, get.stderr).toBe(0);
    expect(get.stdout).toMatch(/state\s+held/);
    expect(get.stdout).toMatch(/held back\s+by its group acct: 1 slot\(s\) taken, a limit of 1/);
    expect(get.stdout).toMatch(/run at\s+\S+Z once released/);
    const list = await jobs('list', '--queue', 'g');
    expect(list.stdout).toContain(`${held}`);
    for (const text of [get.stdout, list.stdout]) expect(text).not.toContain('9999');
    expect((await db.sluice.jobs.get(held as number))?.runAt).toBeNull();
  });
});

describe('mistakes answered in sluice words', () => {
  it('sluice jobs --help exits 0 like every other --help; no action at all is a usage error', async () => {
    const helped = await runCli(['jobs', '--help']);
    expect(helped.code).toBe(0);
    expect(helped.stdout).toContain('sluice jobs:');
    expect((await runCli(['jobs'])).code).toBe(2);
  });

  it('a negative number for a flag gets that flag’s own check, not "ambiguous"', async () => {
    const result = await runCli(['work', '--concurrency', '-1', '--url', db.url]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--concurrency must be');
    expect(result.stderr).not.toContain('ambiguous');
  });

  it('maintenance --once on a database without sluice’s tables says to migrate', async () => {
    const result = await runCli(['maintenance', '--once', '--url', db.url, '--prefix', 'nothere_']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('run `sluice migrate`');
    expect(result.stderr).not.toMatch(/^sluice maintenance: ER_NO_SUCH_TABLE/m);
  });

  it('a server out of connections is a ConnectionError that says so', async () => {
    const server = await tooManyConnectionsServer();
    const url = `mysql://root@127.0.0.1:${(server.address() as { port: number }).port}/test`;
    try {
      const cli = await runCli(['stats', '--url', url]);
      expect(cli.code).toBe(1);
      expect(cli.stderr).toContain('max_connections');
      expect(cli.stderr).not.toMatch(/^sluice stats: ER_CON_COUNT_ERROR: /m);
      const sluice = createSluice({ url, logger: testLogger });
      try {
        const error = await sluice.queues.depth().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(ConnectionError);
        expect((error as Error).message).toMatch(/max_connections .*This process holds \d+ connection/);
      } finally {
        await sluice.close();
      }
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('init refuses a --jobs folder that is not there, and .ts jobs this Node cannot load under PM2', async () => {
    const missing = await runCli(['init', '--jobs', 'no-such-jobs'], { cwd: app });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('is not a folder');
    mkdirSync(join(app, 'tsjobs'));
    writeFileSync(join(app, 'tsjobs', 'send.ts'), 'export default {}\n');
    const typescript = await runCli(['init', '--jobs', 'tsjobs'], { cwd: app });
    // Node 22.18+ and 23.6+ strip types by themselves: there the file is fine.
    if ((process.features as { typescript?: unknown }).typescript) expect(typescript.code).toBe(0);
    else {
      expect(typescript.code).toBe(1);
      expect(typescript.stderr).toContain('send.ts is TypeScript');
    }
  });
});

/**
 * A listener that answers every connection as a server whose max_connections are in use: the
 * handshake's first packet is ERR 1040 (ER_CON_COUNT_ERROR), as MySQL and MariaDB send it.
 */
async function tooManyConnectionsServer(): Promise<Server> {
  const message = Buffer.from('#08004Too many connections');
  const body = Buffer.concat([Buffer.from([0xff, 1040 & 0xff, 1040 >> 8]), message]);
  const packet = Buffer.concat([
    Buffer.from([body.length & 0xff, (body.length >> 8) & 0xff, body.length >> 16, 0]),
    body,
  ]);
  const server = createServer((socket) => socket.end(packet));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}
