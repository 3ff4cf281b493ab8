import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/**
 * A typed handle on test/cluster/galera.sh: a throwaway 3-node MariaDB Galera cluster on loopback.
 * Nodes are addressed by index 0..2, the index of their URL in `urls` (galera.sh numbers them 1..3).
 * Every started cluster is also killed and deleted when the process exits, so a failed or
 * interrupted test file leaves no server behind.
 */
export interface GaleraCluster {
  /** The folder holding the nodes' datadirs, configs and error logs. */
  readonly dir: string;
  /** One `mysql://root@127.0.0.1:<port>/test` URL per node. */
  readonly urls: readonly string[];
  /** SIGKILLs node `index`'s mariadbd (a crash: no shutdown, no leave message to the group). */
  kill(index: number): Promise<void>;
  /**
   * Starts node `index` again after kill() or stop(); resolves once it is Synced in the cluster.
   * `clockOffset` (e.g. '+20s') runs it with its wall clock that far off (libfaketime): NOW() on
   * that node moves, its monotonic clock does not.
   */
  restart(index: number, options?: { clockOffset?: string }): Promise<void>;
  /** galera.sh status: one line per node with its pid and wsrep state. */
  status(): Promise<string>;
  /** Stops every node (SIGTERM, SIGKILL after a deadline); the folder stays. */
  stop(): Promise<void>;
  /** Stops every node and deletes the folder. Idempotent. */
  clean(): Promise<void>;
}

export interface StartClusterOptions {
  /**
   * Node i listens for SQL on basePort+i, group traffic on +10, IST on +20, SST on +30.
   * @defaultValue $SLUICE_GALERA_BASE_PORT, else 3311
   */
  basePort?: number;
  /**
   * An empty (or missing) folder for the cluster, at most 80 characters (unix socket paths).
   * @defaultValue a new folder under $SLUICE_GALERA_ROOT (set by the Galera suite's globalSetup) or the OS temp folder
   */
  dir?: string;
  /** Receives galera.sh's progress lines ("[galera] node 2 joined by SST in 4.4s"). @defaultValue stderr */
  onProgress?: (line: string) => void;
}

const SCRIPT = fileURLToPath(new URL('./galera.sh', import.meta.url));
const NODES = 3;
const TIMEOUT_MS = { start: 180_000, restart: 150_000, kill: 30_000, status: 30_000, stop: 60_000, clean: 60_000 };
type Command = keyof typeof TIMEOUT_MS;

/** Starts a 3-node cluster and waits until every node is Synced and accepts root over TCP. */
export async function startCluster(options: StartClusterOptions = {}): Promise<GaleraCluster> {
  const basePort = options.basePort ?? Number(process.env.SLUICE_GALERA_BASE_PORT ?? 3311);
  const onProgress = options.onProgress ?? ((line: string) => process.stderr.write(`${line}\n`));
  const dir = resolve(options.dir ?? newClusterDir());
  live.add(dir);
  const run = (command: Command, ...args: string[]) => runScript(command, args, onProgress);
  const runWith = (env: Record<string, string>, command: Command, ...args: string[]) =>
    runScript(command, args, onProgress, env);

  let started: string[];
  try {
    started = await run('start', dir, String(basePort));
  } catch (error) {
    killAndRemove(dir); // galera.sh already killed its nodes; this also removes the folder
    live.delete(dir);
    throw error;
  }
  const urls = started.filter((l) => l.startsWith('url ')).map((l) => l.slice(4));
  if (urls.length !== NODES) throw new Error(`galera.sh start printed ${urls.length} URLs, not ${NODES}`);

  const node = (index: number) => {
    if (!Number.isInteger(index) || index < 0 || index >= NODES)
      throw new RangeError(`node index must be 0..${NODES - 1}, not ${index}`);
    return String(index + 1);
  };
  let cleaned: Promise<void> | undefined;
  return {
    dir,
    urls,
    kill: async (index) => void (await run('kill', node(index), dir)),
    restart: async (index, options = {}) =>
      void (await runWith(
        options.clockOffset ? { GALERA_CLOCK_OFFSET: options.clockOffset } : {},
        'restart',
        node(index),
        dir,
      )),
    status: async () => (await run('status', dir)).join('\n'),
    stop: async () => void (await run('stop', dir)),
    clean() {
      cleaned ??= run('clean', dir).then(
        () => void live.delete(dir),
        (error: unknown) => {
          killAndRemove(dir);
          live.delete(dir);
          throw error;
        },
      );
      return cleaned;
    },
  };
}

/**
 * Pids of the running processes whose command line names `dir`: the nodes' mariadbd and, during a
 * state transfer, wsrep_sst_rsync and its rsync daemons. Empty once a cluster is cleaned.
 */
export function processesOf(dir: string): number[] {
  if (!isAbsolute(dir) || dir === '/') throw new Error(`processesOf needs a cluster folder, not '${dir}'`);
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8'); // empty for a zombie
    } catch {
      continue; // exited meanwhile
    }
    if (cmdline.includes(`${dir}/`)) pids.push(Number(entry));
  }
  return pids;
}

/** Runs galera.sh; resolves with its stdout lines, each also given to onProgress as it comes. */
function runScript(
  command: Command,
  args: string[],
  onProgress: (line: string) => void,
  env: Record<string, string> = {},
): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [SCRIPT, command, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
      timeout: TIMEOUT_MS[command], // SIGTERM: a 'start' still kills its nodes on the way out
    });
    const lines: string[] = [];
    let stderr = '';
    createInterface({ input: child.stdout }).on('line', (line) => {
      lines.push(line);
      if (!line.startsWith('url ')) onProgress(line);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) return resolve(lines);
      const why = signal ? `was killed by ${signal} (timeout ${TIMEOUT_MS[command]} ms?)` : `exited with ${code}`;
      reject(new Error(`galera.sh ${command} ${args.join(' ')} ${why}\n${stderr.trimEnd()}`));
    });
  });
}

function newClusterDir(): string {
  const root = process.env.SLUICE_GALERA_ROOT ?? tmpdir();
  mkdirSync(root, { recursive: true });
  return mkdtempSync(join(root, 'cluster-'));
}

/** Folders of clusters started by this process and not cleaned yet. */
const live = new Set<string>();

/** Synchronous last resort (usable in an 'exit' handler): SIGKILL every process under `dir`, delete it. */
export function killAndRemove(dir: string): void {
  for (const pid of processesOf(dir)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // exited meanwhile
    }
  }
  rmSync(dir, { recursive: true, force: true });
}

process.on('exit', () => {
  for (const dir of live) killAndRemove(dir);
});
