import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { freeLoopbackPort } from '../../src/demo/server/freeLoopbackPort.ts';
import { type CliResult, ROOT, runCli } from '../helpers/runCli.ts';
import { SOURCE_CLI } from '../helpers/sourceCli.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

const db = useTestDatabase('cli');
const REFUSE_HEAVY = fileURLToPath(new URL('../fixtures/scripts/refuseHeavyModules.mjs', import.meta.url));
const COMMANDS = [
  'init',
  'migrate',
  'enqueue',
  'work',
  'maintenance',
  'stats',
  'dead',
  'queue',
  'workers',
  'metrics',
  'demo',
];
const VERSION = (JSON.parse(readFileSync(`${ROOT}/package.json`, 'utf8')) as { version: string }).version;

const servers: Server[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
});

/** `sluice <args>` under a loader that refuses knex, mysql2 and pino. */
function runRefusingHeavyModules(args: readonly string[]): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', REFUSE_HEAVY, ...SOURCE_CLI, ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A failure a user caused: exit code, and exactly one line on stderr, without a stack; nothing on stdout. */
function expectOneLine(result: CliResult, code: number, text: string | RegExp): void {
  expect(result.code, result.stderr).toBe(code);
  const lines = result.stderr.trimEnd().split('\n');
  expect(lines, result.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(text);
  expect(result.stderr).not.toMatch(/^\s+at /m);
  expect(result.stdout, 'no log lines (knex warnings) around the failure').toBe('');
}

describe('sluice help and version', () => {
  it('--help lists every command and the exit codes, exit 0; no command is a usage error, exit 2', async () => {
    const helpText = await runCli(['--help']);
    expect(helpText.code).toBe(0);
    for (const command of COMMANDS) expect(helpText.stdout).toMatch(new RegExp(`^  ${command} `, 'm'));
    expect(helpText.stdout).toContain('2 usage error');
    const bare = await runCli([]);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('usage: sluice <command>');
    const helpWork = await runCli(['help', 'work']);
    expect(helpWork.code).toBe(0);
    expect(helpWork.stdout).toContain('sluice work: run a worker');
  });

  it('--version prints the version in package.json', async () => {
    for (const flag of ['--version', '-v']) {
      const result = await runCli([flag]);
      expect(result.code).toBe(0);
      expect(result.stdout).toBe(`${VERSION}\n`);
    }
  });

  it('the help path never imports knex, mysql2 or pino: sluice --help and every command’s --help', async () => {
    const results = await Promise.all([
      runRefusingHeavyModules(['--help']),
      runRefusingHeavyModules(['--version']),
      ...COMMANDS.map((command) => runRefusingHeavyModules([command, '--help'])),
    ]);
    for (const result of results) {
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).not.toBe('');
    }
    // The check bites: a command that runs does import them.
    const running = await runRefusingHeavyModules(['stats', '--url', db.url]);
    expect(running.code).toBe(1);
    expect(running.stderr).toContain('REFUSED_HEAVY_MODULE');
  });
});

describe('sluice usage errors (exit 2, one line, the nearest name)', () => {
  it('an unknown command suggests the nearest one', async () => {
    expectOneLine(await runCli(['wrok']), 2, 'sluice: unknown command "wrok" (did you mean work?)');
    expectOneLine(await runCli(['maintenace']), 2, '(did you mean maintenance?)');
  });

  it('an unknown flag suggests the nearest one; a flag without its value and a malformed value are named', async () => {
    expectOneLine(
      await runCli(['work', '--concurrenci', '3']),
      2,
      'sluice work: unknown flag --concurrenci (did you mean --concurrency?)',
    );
    expectOneLine(await runCli(['work', '--queues']), 2, 'sluice work: --queues needs a value');
    expectOneLine(await runCli(['work', '--concurrency', 'ten']), 2, '--concurrency must be a whole number');
    expectOneLine(await runCli(['stats', 'extra']), 2, 'sluice stats: takes no arguments (got "extra")');
    expectOneLine(await runCli(['dead', 'lsit']), 2, 'unknown action "lsit" (did you mean list?)');
    expectOneLine(await runCli(['stats', '--url', 'not a url']), 2, 'option url is not a URL');
  });

  it('no server named (no --url, MYSQL_URL or MYSQL_URL_FILE): refused, naming MYSQL_URL and --url', async () => {
    const unset = { env: { MYSQL_URL: undefined, MYSQL_URL_FILE: undefined } };
    for (const command of ['stats', 'work']) {
      expectOneLine(
        await runCli([command], unset),
        2,
        `sluice ${command}: option url is not given and neither MYSQL_URL nor MYSQL_URL_FILE is set: sluice does not guess a server`,
      );
    }
  });

  it('a port out of range is a usage error', async () => {
    expectOneLine(
      await runCli(['metrics', '--port', '70000', '--url', db.url]),
      2,
      '--port must be a whole number from 0 to 65535',
    );
  });
});

describe('sluice runtime failures a user can cause (exit 1, one line, no stack)', () => {
  it('server down: nothing listening at the URL', async () => {
    const port = await freeLoopbackPort();
    expectOneLine(
      await runCli(['stats', '--url', `mysql://root@127.0.0.1:${port}/test`]),
      1,
      `sluice stats: cannot use the database at mysql://root@127.0.0.1:${port}/test: connect ECONNREFUSED`,
    );
  });

  it('bad password, and no such database', async () => {
    const url = new URL(db.url);
    url.username = 'sluice_no_such_user';
    url.password = 'wrong';
    const denied = await runCli(['stats', '--url', url.toString()]);
    expectOneLine(denied, 1, /cannot use the database at .*Access denied/);
    expect(denied.stderr).not.toContain('wrong');
    const noDatabase = new URL(db.url);
    noDatabase.pathname = '/sluice_no_such_database';
    expectOneLine(
      await runCli(['stats', '--url', noDatabase.toString()]),
      1,
      /Unknown database 'sluice_no_such_database'/,
    );
  });

  it('connect timeout: a server that accepts and never answers', async () => {
    const silent = createServer(() => {});
    servers.push(silent);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    expectOneLine(await runCli(['stats', '--url', `mysql://root@127.0.0.1:${port}/test`]), 1, /ETIMEDOUT/);
  });

  it('missing file, missing jobs folder, port in use', async () => {
    expectOneLine(
      await runCli(['enqueue', 'no-such-file.ndjson', '--url', db.url]),
      1,
      'sluice enqueue: no such file or folder: no-such-file.ndjson',
    );
    expectOneLine(
      await runCli(['work', '--jobs', 'no-such-folder', '--url', db.url]),
      1,
      `sluice work: ${ROOT}no-such-folder: is not a folder of job files`,
    );
    const taken = createServer();
    servers.push(taken);
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as { port: number };
    expectOneLine(
      await runCli(['metrics', '--port', String(port), '--url', db.url]),
      1,
      `port ${port} on 127.0.0.1 is already in use`,
    );
  });

  it('--verbose and DEBUG add the stack', async () => {
    const port = await freeLoopbackPort();
    const args = ['stats', '--url', `mysql://root@127.0.0.1:${port}/test`];
    for (const result of [await runCli([...args, '--verbose']), await runCli(args, { env: { DEBUG: '1' } })]) {
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^\s+at /m);
    }
  });
});
