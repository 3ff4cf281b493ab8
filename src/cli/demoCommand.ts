import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { createLogger } from '../logging.ts';
import { createSluice, type Sluice } from '../Sluice.ts';
import { COMMON_HELP, intFlag, parse, help } from './parse.ts';
import { renderTable } from './renderTable.ts';

export const DEMO_HELP = `sluice demo: migrate, submit one batch in one transaction, drain it with worker processes
and the maintenance process, then prove every job ran exactly once and none is left.

  --jobs-count N    jobs in the batch (default: 10000)
  --workers N       worker processes (default: 2)
  --concurrency N   jobs at once per worker (default: 20)
  --claim S         random-head | skip-locked (default: random-head)
${COMMON_HELP}`;

const BIN = fileURLToPath(new URL('../../bin/sluice.js', import.meta.url));
const QUEUE = 'demo';

/** The demo's own application table: one row per handler run. */
const SQL_CREATE_RUNS = `
CREATE TABLE IF NOT EXISTS sluice_demo_runs (
  id     BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  job_id BIGINT UNSIGNED NOT NULL,
  n      INT NOT NULL,
  pid    INT NOT NULL,
  KEY ix_job (job_id)
) ENGINE=InnoDB`;
const SQL_CLEAR_RUNS = `TRUNCATE TABLE sluice_demo_runs`;
/** Params: none. Returns handler runs, distinct jobs run, distinct payload numbers, distinct worker pids. */
const SQL_PROOF = `
SELECT COUNT(*) AS runs, COUNT(DISTINCT job_id) AS jobs, COUNT(DISTINCT n) AS numbers, COUNT(DISTINCT pid) AS pids
FROM sluice_demo_runs`;

export async function demoCommand(argv: string[]): Promise<number> {
  const { values: v } = parse(argv, {
    'jobs-count': { type: 'string' },
    workers: { type: 'string' },
    concurrency: { type: 'string' },
    claim: { type: 'string' },
  });
  if (v.help) return help(DEMO_HELP);
  const count = intFlag('jobs-count', v['jobs-count']) ?? 10_000;
  const workers = intFlag('workers', v.workers) ?? 2;
  const concurrency = intFlag('concurrency', v.concurrency) ?? 20;
  const sluice = createSluice({ url: v.url, tablePrefix: v.prefix, logger: createLogger({ level: process.env.LOG_LEVEL ?? 'warn' }) });
  const say = (line: string) => process.stdout.write(`${line}\n`);
  const children: ChildProcess[] = [];
  try {
    say(`sluice demo against ${sluice.url}`);
    const { applied } = await sluice.migrate();
    say(`1. schema: ${applied.length ? `applied ${applied.join(', ')}` : 'up to date'}`);
    await sluice.knex.raw(SQL_CREATE_RUNS);
    await sluice.knex.raw(SQL_CLEAR_RUNS);
    const leftover = (await sluice.stats()).find((s) => s.queue === QUEUE);
    if (leftover && leftover.ready + leftover.delayed + leftover.running > 0) {
      throw new Error(`queue "${QUEUE}" still holds jobs from an earlier run; drain it (sluice work --queues ${QUEUE}) first`);
    }
    const deadBefore = leftover?.dead ?? 0;

    const jobs = Array.from({ length: count }, (_, n) => ({ name: 'demo', queue: QUEUE, payload: { n } }));
    const enqueueStarted = performance.now();
    const { batchId } = await sluice.enqueueBatch(jobs);
    say(`2. enqueued ${count} jobs as batch ${batchId} in one transaction (${Math.round(performance.now() - enqueueStarted)} ms)`);

    const common = [...(v.url ? ['--url', v.url] : []), ...(v.prefix ? ['--prefix', v.prefix] : [])];
    children.push(await startChild(['sweep', '--schedule', '*/2 * * * * *', '--lock-timeout-ms', '15000', ...common]));
    const drainStarted = performance.now();
    for (let i = 0; i < workers; i++) {
      children.push(await startChild(['work', '--queues', QUEUE, '--concurrency', String(concurrency), ...(v.claim ? ['--claim', v.claim] : []), ...common]));
    }
    say(`3. started ${workers} worker processes (pids ${children.slice(1).map((c) => c.pid).join(', ')}) and 1 maintenance process (pid ${children[0]?.pid})`);

    await showProgress(sluice, count, drainStarted);
    const drainSeconds = (performance.now() - drainStarted) / 1000;
    const codes = await Promise.all(children.map(stopChild));
    say(`4. drained in ${drainSeconds.toFixed(2)} s: ${Math.round(count / drainSeconds)} jobs/s; processes exited with ${codes.join(', ')}`);

    const [proof] = ((await sluice.knex.raw(SQL_PROOF)) as [Record<string, number>[]])[0];
    const after = (await sluice.stats()).find((s) => s.queue === QUEUE);
    const left = after ? after.ready + after.delayed + after.running : 0;
    const dead = (after?.dead ?? 0) - deadBefore;
    say('');
    say(
      renderTable(
        ['check', 'expected', 'measured'],
        [
          ['handler runs', count, Number(proof?.runs)],
          ['distinct jobs run', count, Number(proof?.jobs)],
          ['distinct payloads run', count, Number(proof?.numbers)],
          ['worker processes that ran jobs', `<= ${workers}`, Number(proof?.pids)],
          ['jobs left in the queue', 0, left],
          ['jobs dead-lettered', 0, dead],
        ],
      ),
    );
    const ok =
      Number(proof?.runs) === count && Number(proof?.jobs) === count && Number(proof?.numbers) === count && left === 0 && dead === 0 && codes.every((c) => c === 0);
    say('');
    say(ok ? `OK: every one of ${count} jobs ran exactly once; none is left.` : 'FAILED: see the table above.');
    return ok ? 0 : 1;
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    await sluice.close();
  }
}

/** Spawns `sluice <args>` and waits for its PM2-style 'ready' message. */
async function startChild(args: string[]): Promise<ChildProcess> {
  const child = spawn(process.execPath, [BIN, ...args], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' },
  });
  const ready = new Promise<void>((resolve, reject) => {
    child.on('message', (m) => m === 'ready' && resolve());
    child.on('exit', (code) => reject(new Error(`sluice ${args[0]} exited with ${code} before it was ready`)));
  });
  await ready;
  return child;
}

async function stopChild(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const exited = once(child, 'exit');
  child.kill('SIGINT');
  const [code] = (await exited) as [number | null];
  return code;
}

/** A progress bar on a terminal, a line a second otherwise, until the demo queue is empty. */
async function showProgress(sluice: Sluice, total: number, started: number): Promise<void> {
  const tty = process.stdout.isTTY === true;
  let lastLine = 0;
  for (;;) {
    const s = (await sluice.stats()).find((q) => q.queue === QUEUE);
    const remaining = s ? s.ready + s.delayed + s.running : 0;
    const done = total - remaining;
    const rate = Math.round(done / ((performance.now() - started) / 1000));
    const width = 30;
    const filled = Math.round((done / total) * width);
    const line = `   [${'#'.repeat(filled)}${' '.repeat(width - filled)}] ${done}/${total} done, ${s?.running ?? 0} running, ${rate} jobs/s`;
    if (tty) process.stdout.write(`\r${line}`);
    else if (performance.now() - lastLine >= 1000 || remaining === 0) {
      process.stdout.write(`${line}\n`);
      lastLine = performance.now();
    }
    if (remaining === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  if (tty) process.stdout.write('\n');
}
