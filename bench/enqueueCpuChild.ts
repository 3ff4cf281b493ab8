/**
 * One process of bench/enqueueCpu.ts: argv `TABLE ROOT:PREFIX…`, the URL as MYSQL_URL. Opens a raw
 * mysql2 connection and one sluice per side (each from its checkout's sources), then enqueues one
 * job per awaited call, in blocks of CALLS per producer, the producers taking turns (the order
 * flipped every round), ROUNDS rounds, the first a warm-up; sends the median CPU per call of each
 * producer (µs, keyed 'raw' and by its ROOT:PREFIX argument) and exits.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { pino } from 'pino';
import { median } from './median.ts';
import { connectRaw } from './rawConnection.ts';
import { BENCH_QUEUE, JOB_NAME } from './workload.ts';

const [table = 'raw_jobs', ...sides] = process.argv.slice(2);
const url = process.env.MYSQL_URL ?? '';
const CALLS = Number(process.env.ENQUEUE_CPU_CALLS ?? 200);
const ROUNDS = Number(process.env.ENQUEUE_CPU_ROUNDS ?? 8);

/** Params: ?1 queue, ?2 name, ?3 payload JSON. The raw producer's row, as peers/rawPeer.ts writes it. */
const sqlInsertOne = `
INSERT INTO \`${table}\` (queue, name, payload, priority, run_at, created_at)
VALUES (?, ?, ?, 0, NOW(3), NOW(3))`;

const conn = await connectRaw(url);
const payload = (n: number) => ({ n, email: `user${n}@example.com` });
const producers: { key: string; enqueue: (n: number) => Promise<unknown>; close: () => Promise<void> }[] = [
  {
    key: 'raw',
    enqueue: (n) => conn.query(sqlInsertOne, [BENCH_QUEUE, JOB_NAME, JSON.stringify(payload(n))]),
    close: () => conn.end(),
  },
];
for (const side of sides) {
  const [root = '.', prefix = ''] = side.split(':');
  const mod = (await import(pathToFileURL(join(root, 'src/index.ts')).href)) as typeof import('sluice');
  const sluice = mod.createSluice({ url, tablePrefix: prefix, logger: pino({ level: 'warn' }, pino.destination(2)) });
  await sluice.knex.raw('SELECT 1');
  producers.push({
    key: side,
    enqueue: (n) => sluice.enqueue({ name: JOB_NAME, queue: BENCH_QUEUE, payload: payload(n) }),
    close: () => sluice.close(),
  });
}
process.once('message', async () => {
  const cpu = new Map<string, number[]>(producers.map((p) => [p.key, []]));
  let n = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (const producer of round % 2 === 0 ? producers : [...producers].reverse()) {
      const start = process.cpuUsage();
      for (let i = 0; i < CALLS; i++) await producer.enqueue(n++);
      const { user, system } = process.cpuUsage(start);
      if (round > 0) cpu.get(producer.key)?.push((user + system) / CALLS);
    }
  }
  for (const producer of producers) await producer.close();
  process.send?.(Object.fromEntries(producers.map((p) => [p.key, median(cpu.get(p.key) ?? [0])])), () =>
    process.exit(0),
  );
});
process.send?.('ready');
