/**
 * `npm run bench -- soak [--rate 5000] [--duration-s 180] [--workers 2] [--concurrency 50]
 * [--retention-s 30] [--backlog 0]`: a steady state, held. A producer in this process enqueues no-op jobs at a
 * fixed rate (one batch every 100 ms) plus one probe job a second, while real `sluice work`
 * processes drain them and a real `sluice maintenance` process prunes; the install's history
 * retention is set once (sluice.settings.set) and followed by every process without a flag. Every
 * ~10 s it prints the backlog, the row counts of jobs, job_history and dead_jobs (exact COUNT(*)),
 * the pruning rate over the interval and the probes' pickup latency; at the end a table and a JSON
 * line with the verdict (soakVerdict.ts). `--backlog N` first puts N history rows an hour past their
 * retention in the table: the first intervals' pruning rate shows how fast a backlog goes while
 * the fleet drains. BENCH_DATABASE names the database (default sluice_soak).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { RowDataPacket } from 'mysql2/promise';
import { openBench } from './benchDatabase.ts';
import { startFleet } from './processFleet.ts';
import { progress } from './progress.ts';
import { type SoakSample, soakVerdict } from './soakVerdict.ts';
import { SLUICE_CLI } from './sourceCli.ts';

const { values } = parseArgs({
  options: {
    rate: { type: 'string', default: '5000' },
    'duration-s': { type: 'string', default: '180' },
    workers: { type: 'string', default: '2' },
    concurrency: { type: 'string', default: '50' },
    'retention-s': { type: 'string', default: '30' },
    backlog: { type: 'string', default: '0' },
  },
});
const rate = Number(values.rate);
const durationS = Number(values['duration-s']);
const workers = Number(values.workers);
const concurrency = Number(values.concurrency);
const retentionS = Number(values['retention-s']);
const backlog = Number(values.backlog);
if (!Number.isInteger(backlog) || backlog < 0) throw new Error(`--backlog must be a whole number ≥ 0 (got ${backlog})`);
for (const [name, value] of Object.entries({ rate, durationS, workers, concurrency, retentionS }))
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a whole number ≥ 1 (got ${value})`);

const QUEUE = 'soak';
const JOBS_DIR = fileURLToPath(new URL('./soakJobs', import.meta.url));
const TICK_MS = 100;
const SAMPLE_MS = 10_000;
/** How long the fleet gets to drain what is left once the producer stops. */
const DRAIN_TIMEOUT_MS = 120_000;

const bench = await openBench(process.env.BENCH_DATABASE ?? 'sluice_soak');
const { conn, sluice, prefix } = bench;
const t = { jobs: `${prefix}jobs`, history: `${prefix}job_history`, dead: `${prefix}dead_jobs` };
await conn.query(
  'CREATE TABLE soak_probes (job_id BIGINT UNSIGNED NOT NULL PRIMARY KEY, created_at DATETIME(3) NOT NULL, started_at DATETIME(3) NOT NULL, KEY ix_started (started_at)) ENGINE=InnoDB',
);
await sluice.settings.set({ historyRetentionMs: retentionS * 1000 });
await seedHistory(backlog);
progress(
  `soak on ${bench.server.version}: ${rate} jobs/s for ${durationS} s, ${workers} workers × ${concurrency}, history retention ${retentionS} s (install setting)`,
);

const env = { MYSQL_URL: bench.url, LOG_LEVEL: 'warn' };
const common = ['--prefix', bench.prefix, '--jobs', JOBS_DIR];
const cli = ['--import', 'tsx', ...SLUICE_CLI];
const maintenance = await startFleet(1, [...cli, 'maintenance', ...common], env);
const fleet = await startFleet(
  workers,
  [...cli, 'work', ...common, '--queues', QUEUE, '--concurrency', String(concurrency)],
  env,
);

async function count(table: string): Promise<number> {
  const [rows] = await conn.query<RowDataPacket[]>(`SELECT COUNT(*) AS n FROM \`${table}\``);
  return Number(rows[0]?.n);
}

/** Pickup latencies (ms) of the probes that started since `afterId`, and the last probe id seen. */
async function probesSince(afterId: number): Promise<{ latencies: number[]; lastId: number }> {
  const [rows] = await conn.query<RowDataPacket[]>(
    'SELECT job_id, TIMESTAMPDIFF(MICROSECOND, created_at, started_at) / 1000 AS ms FROM soak_probes WHERE job_id > ? ORDER BY job_id',
    [afterId],
  );
  const latencies = rows.map((r) => Number(r.ms));
  return { latencies, lastId: rows.length > 0 ? Number(rows[rows.length - 1]?.job_id) : afterId };
}

let enqueued = 0;
let producing = true;
/** The producer: every tick, what the rate owes since the start, in one batch; one probe a second. */
async function produce(started: number): Promise<void> {
  let probes = 0;
  while (producing) {
    const elapsed = performance.now() - started;
    const owed = Math.floor((rate * elapsed) / 1000) - enqueued;
    if (owed > 0) {
      await sluice.enqueueBatch(Array.from({ length: owed }, () => ({ name: 'noop', queue: QUEUE })));
      enqueued += owed;
    }
    if (elapsed / 1000 >= probes) {
      await sluice.enqueue({ name: 'probe', queue: QUEUE });
      probes++;
    }
    await sleep(Math.max(0, TICK_MS - (performance.now() - started - elapsed)));
  }
}

const samples: SoakSample[] = [];
const started = performance.now();
const producer = produce(started);
let lastProbe = 0;
let prev = { at: started, history: backlog, backlog: 0, enqueued: 0 };
const header = '   t s  backlog   history   dead  pruned/s  done/s  probe p50/p90 ms';
process.stderr.write(`${header}\n`);
try {
  while (performance.now() - started < durationS * 1000) {
    await sleep(Math.min(SAMPLE_MS, durationS * 1000 - (performance.now() - started)));
    const at = performance.now();
    const [jobs, history, dead] = [await count(t.jobs), await count(t.history), await count(t.dead)];
    const { latencies, lastId } = await probesSince(lastProbe);
    lastProbe = lastId;
    const seconds = (at - prev.at) / 1000;
    // Finished in the interval: what was enqueued minus what the backlog grew by (no job fails here).
    const done = enqueued - prev.enqueued - (jobs - prev.backlog);
    const pruned = Math.max(0, prev.history + done - history);
    const sample: SoakSample = {
      atS: Math.round((at - started) / 1000),
      backlog: jobs,
      history,
      dead,
      doneRate: Math.round(done / seconds),
      pruneRate: Math.round(pruned / seconds),
      probeP50Ms: percentile(latencies, 0.5),
      probeP90Ms: percentile(latencies, 0.9),
      probes: latencies.length,
    };
    samples.push(sample);
    process.stderr.write(`${row(sample)}\n`);
    prev = { at, history, backlog: jobs, enqueued };
  }
} finally {
  producing = false;
  await producer;
}

progress(`producer stopped after ${enqueued} jobs; waiting for the backlog to drain`);
const drainStart = performance.now();
let backlogAfter = await count(t.jobs);
while (backlogAfter > 0 && performance.now() - drainStart < DRAIN_TIMEOUT_MS) {
  await sleep(500);
  backlogAfter = await count(t.jobs);
}
const drainedInS = Math.round((performance.now() - drainStart) / 100) / 10;
const probeCount = (await probesSince(0)).latencies.length;
const dead = await count(t.dead);
const exits = [...(await fleet.stop()), ...(await maintenance.stop())];
await bench.close();
if (exits.some((code) => code !== 0)) progress(`a child exited with ${exits.join(', ')} (expected all 0)`);

const verdict = soakVerdict(samples, { rate, retentionS, backlogAfter, dead });
process.stdout.write(`${header}\n${samples.map(row).join('\n')}\n\n`);
process.stdout.write(
  `history target (retention × rate): ${verdict.historyTarget}; plateau (last third, max): ${verdict.historyPlateau} — ${verdict.historyOk ? 'flat' : 'NOT flat'}\n` +
    `probe p90 (median of the intervals), first third → last third: ${verdict.latencyFirstP90Ms} → ${verdict.latencyLastP90Ms} ms — ${verdict.latencyOk ? 'flat' : 'NOT flat'}\n` +
    `backlog, last third (max): ${verdict.backlogPeak} — ${verdict.backlogOk ? 'kept up' : 'did NOT keep up'}\n` +
    `backlog after the producer stopped: ${backlogAfter} (drained in ${drainedInS} s); dead ${dead}; ${probeCount} probes ran\n` +
    `verdict: ${verdict.ok ? 'steady' : 'NOT steady'}\n`,
);
process.stdout.write(
  `${JSON.stringify({ bench: 'soak', rate, durationS, workers, concurrency, retentionS, backlog, enqueued, drainedInS, probeCount, ...verdict, samples })}\n`,
);

/** `count` history rows finished an hour before the retention ended, with job ids no job will have. */
async function seedHistory(count: number): Promise<void> {
  const FIRST_ID = 1_000_000_000_000;
  for (let start = 0; start < count; start += 5_000) {
    const n = Math.min(5_000, count - start);
    const rows = Array.from(
      { length: n },
      (_, i) =>
        `(${FIRST_ID + start + i}, 'seed', 'noop', '{}', 0, NULL, NOW(3) - INTERVAL 2 HOUR, NOW(3) - INTERVAL 1 HOUR)`,
    );
    await conn.query(
      `INSERT INTO \`${t.history}\` (job_id, queue, name, payload, retry_times, batch_id, created_at, finished_at) VALUES ${rows.join(', ')}`,
    );
  }
  if (count > 0) progress(`seeded ${count} expired history rows`);
}

function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number);
}

function row(s: SoakSample): string {
  const latency = s.probeP50Ms === null ? '–' : `${s.probeP50Ms}/${s.probeP90Ms}`;
  return [
    String(s.atS).padStart(6),
    String(s.backlog).padStart(8),
    String(s.history).padStart(9),
    String(s.dead).padStart(6),
    String(s.pruneRate).padStart(9),
    String(s.doneRate).padStart(7),
    latency.padStart(18),
  ].join(' ');
}
