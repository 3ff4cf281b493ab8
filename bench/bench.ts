/**
 * `npm run bench [-- <scenario>] [options]`: the one entry point of the benches. With no scenario
 * (or options only) it runs the grid (run.ts: sluice beside its peers and the raw-SQL ceilings);
 * `npm run bench -- <scenario> …` runs one named scenario, its options passed on; `npm run bench
 * -- --list` lists them. Each scenario runs as its own Node process (the grid's children and the
 * peers' processes are spawned by the scenario itself), with the flags and BENCH_DATABASE default
 * it needs; its exit code is this one's.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

interface Scenario {
  /** The script under bench/. */
  readonly file: string;
  /** What it measures, for --list. */
  readonly about: string;
  /** BENCH_DATABASE unless the caller set one: a scenario that keeps its data apart. */
  readonly database?: string;
  /** Node flags beyond the TypeScript loader. */
  readonly nodeFlags?: readonly string[];
  /** Options put before the caller's. */
  readonly args?: readonly string[];
}

const SCENARIOS: Readonly<Record<string, Scenario>> = {
  grid: { file: 'run.ts', about: 'the drain grid, enqueue rows and pickup beside the peers (~25 min)' },
  quick: { file: 'run.ts', args: ['--quick'], about: 'the grid in two small cells, for development' },
  ratios: { file: 'ratios.ts', about: "the grid's enqueue and two drain ratios, in minutes" },
  compare: { file: 'compare.ts', about: 'two grid results side by side, cell by cell' },
  path: { file: 'drainPath.ts', about: "where a drained job's server time goes, step by step" },
  backlog: { file: 'delayedBacklog.ts', about: 'a drain with and without 1,000,000 delayed jobs' },
  peers: { file: 'peers.ts', about: "sluice's peers alone, each on its own store, on the grid's workload" },
  pickup: { file: 'pickupLatency.ts', about: 'enqueue → handler latency into an idle worker' },
  ring: { file: 'ringCost.ts', about: 'what one ring costs on a server with many connections' },
  connections: { file: 'connectionBudget.ts', about: 'server connections per process, by role' },
  stall: { file: 'stallTolerance.ts', about: 'how long a handler may block its event loop before its worker is dead' },
  dashboard: { file: 'dashboardLoad.ts', about: 'dashboard page loads on a queue of 1,000,000 jobs' },
  idle: { file: 'idleFleet.ts', about: 'what an idle fleet costs the server' },
  enqueue: { file: 'concurrentEnqueue.ts', about: 'single enqueues from many callers, coalesced commits' },
  'enqueue-cpu': { file: 'enqueueCpu.ts', about: 'client CPU per single enqueue against a raw INSERT' },
  ratio: {
    file: 'enqueueRatio.ts',
    database: 'sluice_bench_ratio',
    about: 'single enqueue, 8 producers × 1 caller, against raw autocommit INSERTs',
  },
  graph: { file: 'workflowGraph.ts', about: 'workflow enqueue and drain, release latencies' },
  rate: { file: 'rateLimit.ts', about: "how closely a queue's rate limit holds under a fleet" },
  limits: { file: 'limitedDrain.ts', about: 'what a queue limit costs a drain' },
  fair: { file: 'fairShares.ts', about: 'fair shares between groups (tenants)' },
  groups: { file: 'groupScale.ts', about: 'group machinery at 10 and at 100,000 groups' },
  soak: { file: 'soak.ts', about: 'a long run: throughput, memory and server growth over time' },
  queues: {
    file: 'manyQueues.ts',
    database: 'sluice_bench_queues',
    about: 'a worker claiming across 1,000 queues, a prefix or every queue',
  },
  schedules: {
    file: 'schedules.ts',
    database: 'sluice_bench_schedules',
    about: 'maintenance passes over 100,000 run-time schedules',
  },
  handoff: { file: 'handoffLatency.ts', about: 'a freed group or cap slot to the next start' },
  shape: {
    file: 'shape.ts',
    nodeFlags: ['--expose-gc'],
    about: 'an install of 10,000 queues: every task, page, scrape and claim',
  },
  ab: { file: 'drainAB.ts', about: 'one drain setting, this checkout against another (--base DIR)' },
  'gc-summary': { file: 'gcSummary.ts', about: "sums a --trace-gc log per job (bench/README.md, 'The collector')" },
  slots: { file: 'slotOccupancy.ts', about: 'how full one worker keeps its slots with short jobs' },
};

const [first, ...rest] = process.argv.slice(2);
if (first === '--list' || first === 'list') {
  const width = Math.max(...Object.keys(SCENARIOS).map((name) => name.length));
  for (const [name, s] of Object.entries(SCENARIOS)) process.stdout.write(`${name.padEnd(width)}  ${s.about}\n`);
  process.exit(0);
}
const named = first !== undefined && !first.startsWith('-');
const name = named ? first : 'grid';
const scenario = SCENARIOS[name];
if (!scenario) {
  process.stderr.write(`npm run bench: no scenario "${name}"; \`npm run bench -- --list\` lists them\n`);
  process.exit(2);
}
const args = [...(scenario.args ?? []), ...(named ? rest : process.argv.slice(2))];
const env = { ...process.env };
if (scenario.database && !env.BENCH_DATABASE) env.BENCH_DATABASE = scenario.database;
const script = fileURLToPath(new URL(scenario.file, import.meta.url));
const child = spawn(
  process.execPath,
  [...(scenario.nodeFlags ?? []), '--import', 'tsx', '--conditions=sluice-source', script, ...args],
  { stdio: 'inherit', env },
);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
