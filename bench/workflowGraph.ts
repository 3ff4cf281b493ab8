/**
 * `npm run bench -- graph [--groups 1000] [--width 99] [--rounds 2] [--concurrency 100] [--idle 40]
 * [--fanin-priority=-1] [--enqueue-only] [--shape fanin|held|random]`:
 * what a workflow costs. A graph of groups × (width leaves + one fan-in of them) + one final job
 * after every fan-in (defaults: 100,001 jobs) is enqueued in one batch, alternating round by round
 * with the same number of independent jobs in one batch: the time ratio. Then one worker (in this
 * process, history on) drains the graph, and the release latency of every fan-in and of the final
 * job is read from job_history on the database clock: from its last parent's finished_at (written
 * in the completing transaction, just before its commit) to its own started_at (its claim). "Under
 * load" is that drain, where each release competes with the leaves of every other group; "idle" is
 * `--idle` parent → child pairs enqueued one at a time, each after the last finished, on the same
 * idle worker. The drain is checked from job_history: every job finished once (a row each, none
 * retried) and no fan-in or final job claimed before its last parent's finished_at. A released child is due from its release (run_at = GREATEST(its own, NOW(3))), so
 * under load its latency is mostly its wait behind the leaves still queued before it (FIFO);
 * `--fanin-priority=-1` puts fan-ins ahead of them, which leaves the release's own cost.
 * `--shape held` puts each group's leaves behind a root job, `--shape random` enqueues a random DAG
 * of as many jobs (graphShapes.ts): both time the enqueue alone (as `--enqueue-only`).
 * BENCH_DATABASE names the database (default sluice_bench_graph).
 */
import { parseArgs } from 'node:util';
import { defineJob, type JobSpec } from 'sluice';
import { type Bench, openBench, truncate } from './benchDatabase.ts';
import { GRAPH_SHAPES, type GraphShape, graphJobs } from './graphShapes.ts';
import { median } from './median.ts';
import { percentiles } from './peers.ts';
import { progress } from './progress.ts';

const QUEUE = 'graph';
const { values } = parseArgs({
  options: {
    groups: { type: 'string', default: '1000' },
    width: { type: 'string', default: '99' },
    rounds: { type: 'string', default: '2' },
    concurrency: { type: 'string', default: '100' },
    idle: { type: 'string', default: '40' },
    'fanin-priority': { type: 'string', default: '0' },
    'enqueue-only': { type: 'boolean', default: false },
    shape: { type: 'string', default: 'fanin' },
  },
});
const groups = Number(values.groups);
const width = Number(values.width);
const rounds = Number(values.rounds);
const concurrency = Number(values.concurrency);
const idlePairs = Number(values.idle);
/** The fan-ins' and the final job's priority: below 0, a released one goes ahead of the leaves still queued. */
const faninPriority = Number(values['fanin-priority']);

const shape = values.shape as GraphShape;
if (!GRAPH_SHAPES.includes(shape)) throw new Error(`--shape: one of ${GRAPH_SHAPES.join(', ')}`);
const enqueueOnly = values['enqueue-only'] || shape !== 'fanin';

function graph(): JobSpec[] {
  return graphJobs(shape, QUEUE, { groups, width, faninPriority });
}

function independent(count: number): JobSpec[] {
  return Array.from({ length: count }, (_, n) => ({ name: 'leaf', queue: QUEUE, payload: { g: n % groups } }));
}

const noop = (name: string) => defineJob({ name, handle() {} });
const JOBS = [noop('leaf'), noop('fanIn'), noop('final')];

async function clear(bench: Bench): Promise<void> {
  const p = bench.prefix;
  await truncate(bench.conn, [
    `${p}jobs`,
    `${p}batches`,
    `${p}job_history`,
    `${p}job_edges`,
    `${p}job_graph_history`,
    `${p}job_holds`,
  ]);
}

async function timeEnqueue(bench: Bench, jobs: JobSpec[]): Promise<number> {
  await clear(bench);
  const started = performance.now();
  await bench.sluice.enqueueBatch(jobs);
  return (performance.now() - started) / 1000;
}

interface Finished {
  readonly job_id: number;
  readonly name: string;
  readonly g: number | null;
  readonly started: number;
  readonly finished: number;
}

/** Milliseconds from each fan-in's (and the final job's) last parent's finish to its own start. */
async function releaseLatencies(bench: Bench, batchId: number): Promise<{ fanIns: number[]; final: number | null }> {
  const [rows] = (await bench.conn.query(
    `SELECT job_id, name, JSON_EXTRACT(payload, '$.g') AS g,
            UNIX_TIMESTAMP(started_at) * 1000 AS started, UNIX_TIMESTAMP(finished_at) * 1000 AS finished
     FROM \`${bench.prefix}job_history\` WHERE batch_id = ?`,
    [batchId],
  )) as unknown as [Finished[]];
  const lastLeaf = new Map<number, number>();
  const fanInFinish: number[] = [];
  for (const r of rows) {
    if (r.name === 'leaf') lastLeaf.set(Number(r.g), Math.max(lastLeaf.get(Number(r.g)) ?? 0, Number(r.finished)));
    if (r.name === 'fanIn') fanInFinish.push(Number(r.finished));
  }
  const fanIns = rows
    .filter((r) => r.name === 'fanIn')
    .map((r) => Number(r.started) - (lastLeaf.get(Number(r.g)) as number));
  const final = rows.find((r) => r.name === 'final');
  return { fanIns, final: final === undefined ? null : Number(final.started) - Math.max(...fanInFinish) };
}

/** `idlePairs` parent → child pairs, one at a time on an idle worker: each child's release latency. */
async function idleLatencies(bench: Bench): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < idlePairs; i++) {
    const { batchId } = await bench.sluice.enqueueBatch([
      { name: 'leaf', queue: QUEUE, ref: 'p', payload: { g: 0 } },
      { name: 'fanIn', queue: QUEUE, parents: ['p'], payload: { g: 0 } },
    ]);
    for (;;) {
      const [[row]] = (await bench.conn.query(
        `SELECT COUNT(*) AS n FROM \`${bench.prefix}job_history\` WHERE batch_id = ?`,
        [batchId],
      )) as unknown as [{ n: number }[]];
      if (Number(row?.n) === 2) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const { fanIns } = await releaseLatencies(bench, batchId as number);
    samples.push(...fanIns);
    await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 100));
  }
  return samples;
}

const bench = await openBench(process.env.BENCH_DATABASE ?? 'sluice_bench_graph');
try {
  const total = graph().length;
  progress(
    `graph: ${total.toLocaleString('en')} jobs (${shape}: ${groups} × ${width} leaves), ${bench.server.version}`,
  );
  const flat: number[] = [];
  const dag: number[] = [];
  for (let round = 1; round <= rounds; round++) {
    flat.push(await timeEnqueue(bench, independent(total)));
    dag.push(await timeEnqueue(bench, graph()));
    progress(`round ${round}: independent ${flat.at(-1)?.toFixed(2)} s, graph ${dag.at(-1)?.toFixed(2)} s`);
  }
  const ratio = median(dag) / median(flat);
  const enqueueLine = `enqueue of ${total.toLocaleString('en')} jobs in one batch: independent ${median(flat).toFixed(2)} s, graph (${shape}) ${median(dag).toFixed(2)} s (median of ${rounds}): ratio ${ratio.toFixed(2)}`;
  if (enqueueOnly) {
    process.stdout.write(`${enqueueLine}\n${JSON.stringify({ total, shape, enqueue: { flat, dag, ratio } })}\n`);
    process.exit(0);
  }
  await clear(bench);
  const { batchId } = await bench.sluice.enqueueBatch(graph());
  const worker = bench.sluice.worker({ jobs: JOBS, queues: [QUEUE], concurrency });
  await worker.start();
  const drainStarted = performance.now();
  for (;;) {
    const [[row]] = (await bench.conn.query(`SELECT COUNT(*) AS n FROM \`${bench.prefix}jobs\``)) as unknown as [
      { n: number }[],
    ];
    if (Number(row?.n) === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const drainSeconds = (performance.now() - drainStarted) / 1000;
  const loaded = await releaseLatencies(bench, batchId as number);
  const [[tally]] = (await bench.conn.query(
    `SELECT COUNT(*) AS n, COALESCE(SUM(retry_times > 0), 0) AS retried FROM \`${bench.prefix}job_history\` WHERE batch_id = ?`,
    [batchId],
  )) as unknown as [{ n: number; retried: number }[]];
  // A child's claim (started_at) comes after its parents' finished_at, written before their commits.
  const early = loaded.fanIns.filter((ms) => ms < 0).length + ((loaded.final ?? 0) < 0 ? 1 : 0);
  const idle = await idleLatencies(bench);
  await worker.stop();
  const l = percentiles(loaded.fanIns);
  const i = percentiles(idle);
  const ms = (v: number) => v.toFixed(0);
  process.stdout.write(
    `${[
      enqueueLine,
      `drain of the graph (one worker, concurrency ${concurrency}): ${drainSeconds.toFixed(1)} s, ${(total / drainSeconds).toFixed(0)} jobs/s`,
      `drain check: ${Number(tally?.n).toLocaleString('en')} of ${total.toLocaleString('en')} jobs finished once (history), ${Number(tally?.retried)} retried; released jobs started before a parent finished: ${early}`,
      `release latency under load (${l.samples} fan-ins): p50 ${ms(l.p50)} p90 ${ms(l.p90)} p99 ${ms(l.p99)} ms; final job ${ms(loaded.final ?? Number.NaN)} ms after its last parent`,
      `release latency idle (${i.samples} pairs): p50 ${ms(i.p50)} p90 ${ms(i.p90)} p99 ${ms(i.p99)} ms`,
      JSON.stringify({
        total,
        enqueue: { flat, dag, ratio },
        drainSeconds,
        finished: Number(tally?.n),
        retried: Number(tally?.retried),
        early,
        loaded: { ...l, final: loaded.final },
        idle: i,
      }),
    ].join('\n')}\n`,
  );
} finally {
  await bench.close();
}
