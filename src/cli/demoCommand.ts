import { DEMO_JOBS, type DemoProcess, killChildren, startChild, stopChild } from '../demo/demoFleet.ts';
import type { ServerInUse } from '../demo/server/serverOrThrowaway.ts';
import type { Sluice } from '../Sluice.ts';
import { openSluice } from './openSluice.ts';
import { COMMON_HELP, choice, help, intFlag, parse } from './parse.ts';
import { renderTable } from './renderTable.ts';
import { UsageError } from './UsageError.ts';

/** The demo's own install in the database: its tables are dropped when it ends. */
const DEMO_PREFIX = 'sluice_demo_';
/** The demo's own default, given explicitly (the library guesses no server): a local server, else a throwaway one. */
const LOCAL_URL = 'mysql://root@127.0.0.1:3306/test';
const QUEUE = 'demo';
const CLAIM_STRATEGIES = ['random-head', 'skip-locked'] as const;

export const DEMO_HELP = `sluice demo: migrate, submit one batch in one transaction, drain it with worker processes
and the maintenance process running the demo's own job (never the app's jobs/), then prove every
job ran exactly once and none is left. Its tables (prefix ${DEMO_PREFIX}, and sluice_demo_runs)
are dropped when it ends. With no --url, MYSQL_URL or MYSQL_URL_FILE it uses the local server
${LOCAL_URL}. When nothing answers at the URL, it starts a throwaway server (MySQL 8
through testcontainers where a container runtime exists, else a private mariadbd/mysqld from this
machine's binaries) and removes it afterwards.

  --jobs-count N    jobs in the batch (default: 10000)
  --workers N       worker processes (default: 2)
  --concurrency N   jobs at once per worker (default: 20)
  --claim S         random-head | skip-locked (default: random-head)
  --keep            keep the demo's tables (and a throwaway server's data is still removed)
${COMMON_HELP.split('\n')
  .filter((line) => !line.includes('--prefix'))
  .join('\n')}`;

export async function demoCommand(argv: string[]): Promise<number> {
  const { values: v } = parse(argv, {
    'jobs-count': { type: 'string' },
    workers: { type: 'string' },
    concurrency: { type: 'string' },
    claim: { type: 'string' },
    keep: { type: 'boolean' },
  });
  if (v.help) return help(DEMO_HELP);
  if (v.prefix !== undefined)
    throw new UsageError(`takes no --prefix: the demo uses tables of its own (${DEMO_PREFIX}*)`);
  const count = intFlag('jobs-count', v['jobs-count'], 1) ?? 10_000;
  const workers = intFlag('workers', v.workers, 1, 64) ?? 2;
  const concurrency = intFlag('concurrency', v.concurrency, 1) ?? 20;
  const claim = v.claim === undefined ? undefined : choice('claim strategy', v.claim, CLAIM_STRATEGIES);
  const say = (line: string) => process.stdout.write(`${line}\n`);

  const [{ serverOrThrowaway }, { urlFromEnvironment }] = await Promise.all([
    import('../demo/server/serverOrThrowaway.ts'),
    import('../db/connect.ts'),
  ]);
  const server = await serverOrThrowaway(v.url ?? urlFromEnvironment() ?? LOCAL_URL, say);
  // Ctrl-C: stop the drain, then clean up as after a failure; a second one ends the demo at once.
  const stopping = new AbortController();
  const onSignal = () => stopping.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const children: DemoProcess[] = [];
  let sluice: Sluice | undefined;
  try {
    if (server.started) say(`started ${server.started}; it is removed when the demo ends`);
    sluice = await openSluice(
      { url: server.url, prefix: DEMO_PREFIX },
      { logLevel: process.env.LOG_LEVEL ?? 'warn', poolMax: 4 },
    );
    const ok = await runDemo(sluice, children, stopping.signal, {
      url: server.url,
      count,
      workers,
      concurrency,
      claim,
    });
    await cleanUp(sluice, server, v.keep === true, say);
    if (!ok) return 1;
    say('');
    say(`OK: every one of ${count} jobs ran exactly once; none is left.`);
    return 0;
  } catch (error) {
    killChildren(children);
    await cleanUp(sluice, server, v.keep === true, () => {}).catch(() => undefined);
    throw error;
  } finally {
    killChildren(children);
    await sluice?.close();
    await server.stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

interface DemoOptions {
  /** The server's URL, handed to the children in their environment. */
  readonly url: string;
  readonly count: number;
  readonly workers: number;
  readonly concurrency: number;
  readonly claim: string | undefined;
}

/** The demo proper, against `sluice` (the demo's own prefix). True when every job ran exactly once; a failure is said at once. */
async function runDemo(sluice: Sluice, children: DemoProcess[], signal: AbortSignal, o: DemoOptions): Promise<boolean> {
  const say = (line: string) => process.stdout.write(`${line}\n`);
  const [{ createRuns, runsProof }, { watchDrain }] = await Promise.all([
    import('../demo/demoRuns.ts'),
    import('../demo/watchDrain.ts'),
  ]);
  say(`sluice demo against ${sluice.url} (tables ${DEMO_PREFIX}* and sluice_demo_runs)`);
  const { applied } = await sluice.migrate();
  say(`1. schema: ${applied.length ? `applied ${applied.length} migrations` : 'up to date'}`);
  await createRuns(sluice.knex);
  const [leftover] = await sluice.queues.depth({ queue: QUEUE });
  if (leftover && leftover.ready.count + leftover.notDue.count + leftover.running.count > 0) {
    say(
      `FAILED: queue "${QUEUE}" still holds jobs of another demo run: wait for it, or drop the ${DEMO_PREFIX}* tables`,
    );
    return false;
  }
  const deadBefore = leftover?.dead.count ?? 0;

  const jobs = Array.from({ length: o.count }, (_, n) => ({ name: 'demo', queue: QUEUE, payload: { n } }));
  const enqueueStarted = performance.now();
  const { batchId } = await sluice.enqueueBatch(jobs);
  say(
    `2. enqueued ${o.count} jobs as batch ${batchId} in one transaction (${Math.round(performance.now() - enqueueStarted)} ms)`,
  );

  const url = o.url;
  const problems: string[] = [];
  const onProblem = (line: string) => problems.push(line);
  const common = ['--prefix', DEMO_PREFIX, '--jobs', DEMO_JOBS];
  const maintenanceArgs = ['maintenance', '--schedule', '*/2 * * * * *', '--lock-timeout-ms', '15000', ...common];
  children.push(await startChild('the maintenance process', maintenanceArgs, url, onProblem));
  const drainStarted = performance.now();
  const workArgs = ['work', '--queues', QUEUE, '--concurrency', String(o.concurrency), ...common];
  if (o.claim) workArgs.push('--claim', o.claim);
  for (let i = 1; i <= o.workers; i++) children.push(await startChild(`worker ${i}`, workArgs, url, onProblem));
  const pids = children.slice(1).map((c) => c.child.pid);
  say(
    `3. started ${o.workers} worker process${o.workers === 1 ? '' : 'es'} (pid${o.workers === 1 ? '' : 's'} ${pids.join(', ')}) and 1 maintenance process (pid ${children[0]?.child.pid}) on the demo's own job`,
  );

  const failure = await watchDrain({
    sluice,
    knex: sluice.knex,
    queue: QUEUE,
    total: o.count,
    processes: children,
    problems,
    signal,
    startedAt: drainStarted,
  });
  const drainSeconds = (performance.now() - drainStarted) / 1000;
  if (failure) {
    say(`FAILED: ${failure}`);
    await Promise.all(children.map(stopChild));
    return false;
  }
  const codes = await Promise.all(children.map(stopChild));
  say(
    `4. drained in ${drainSeconds.toFixed(2)} s: ${Math.round(o.count / drainSeconds)} jobs/s; processes exited with ${codes.join(', ')}`,
  );

  const proof = await runsProof(sluice.knex);
  const [after] = await sluice.queues.depth({ queue: QUEUE });
  const left = after ? after.ready.count + after.notDue.count + after.running.count : 0;
  const dead = (after?.dead.count ?? 0) - deadBefore;
  say('');
  say(
    renderTable(
      ['check', 'expected', 'measured'],
      [
        ['handler runs', o.count, proof.runs],
        ['distinct jobs run', o.count, proof.jobs],
        ['distinct payloads run', o.count, proof.numbers],
        ['worker processes that ran jobs', `<= ${o.workers}`, proof.pids],
        ['jobs left in the queue', 0, left],
        ['jobs dead-lettered', 0, dead],
      ],
    ),
  );
  const ok =
    proof.runs === o.count &&
    proof.jobs === o.count &&
    proof.numbers === o.count &&
    left === 0 &&
    dead === 0 &&
    codes.every((c) => c === 0);
  if (!ok) say('FAILED: see the table above.');
  return ok;
}

/** Drops the demo's tables (not with --keep); a throwaway server is removed by its stop(). */
async function cleanUp(
  sluice: Sluice | undefined,
  server: ServerInUse,
  keep: boolean,
  say: (line: string) => void,
): Promise<void> {
  if (!sluice) return;
  if (server.started) {
    say(`5. removing ${server.started}`);
    return;
  }
  if (keep) {
    say(`5. kept the demo's tables (${DEMO_PREFIX}*, sluice_demo_runs)`);
    return;
  }
  const [{ dropTables }, { dropRuns }] = await Promise.all([
    import('../db/dropTables.ts'),
    import('../demo/demoRuns.ts'),
  ]);
  await dropTables(sluice.knex, sluice.tables);
  await dropRuns(sluice.knex);
  say(`5. dropped the demo's tables (${DEMO_PREFIX}*, sluice_demo_runs)`);
}
