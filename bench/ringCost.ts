/**
 * `npm run bench -- ring [--connections 1000] [--doorbells 4] [--rings 200]`: what one ring costs
 * on a server with many connections. Opens `connections` idle connections (an application's
 * pools), starts `doorbells` real doorbells (src/wakeups/Doorbell.ts) on one queue and a Ringer,
 * then rings one job at a time, 20 ms apart: the round (ring() to settled(): the enqueuer's
 * statements) and the wake (ring() to the doorbell's onRing), p50 and p99; and, alone, the
 * process-list read a verified ring makes. Runs from any checkout (copy it into the other one for
 * a before/after). Database BENCH_DATABASE (default sluice_bench_ring), re-created.
 */
import { parseArgs } from 'node:util';
import mysql from 'mysql2/promise';
import { pino } from 'pino';
import { connect } from '../src/db/connect.ts';
import { SluiceEvents } from '../src/events.ts';
import { createSluice } from '../src/index.ts';
import { Doorbell } from '../src/wakeups/Doorbell.ts';
import { Ringer } from '../src/wakeups/Ringer.ts';

const { values } = parseArgs({
  options: {
    connections: { type: 'string', default: '1000' },
    doorbells: { type: 'string', default: '4' },
    rings: { type: 'string', default: '200' },
  },
});
const server = new URL(process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test');
const database = process.env.BENCH_DATABASE ?? 'sluice_bench_ring';
const url = new URL(server);
url.pathname = `/${database}`;
const logger = pino({ level: 'warn' }, pino.destination(2));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.ceil((p / 100) * xs.length) - 1] ?? NaN;
const line = (what: string, xs: number[]) =>
  `${what.padEnd(36)} p50 ${pct(xs, 50).toFixed(2)} ms  p99 ${pct(xs, 99).toFixed(2)} ms  (${xs.length})`;

const admin = await mysql.createConnection({ uri: server.toString() });
await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
await admin.query(`CREATE DATABASE \`${database}\``);
const sluice = createSluice({ url: url.toString(), logger });
await sluice.migrate();

const idle: mysql.Connection[] = [];
for (let opened = 0; opened < Number(values.connections); opened += 50) {
  const batch = Math.min(50, Number(values.connections) - opened);
  idle.push(
    ...(await Promise.all(Array.from({ length: batch }, () => mysql.createConnection({ uri: url.toString() })))),
  );
}

let waker: (() => void) | null = null;
const events = new SluiceEvents();
const doorbells = Array.from(
  { length: Number(values.doorbells) },
  (_, n) =>
    new Doorbell({
      knex: connect({ url: url.toString(), poolMax: 2, logger }),
      tables: sluice.tables,
      events,
      workerId: `bench-${n}`,
      queues: ['ring'],
      onRing: () => waker?.(),
    }),
);
for (const d of doorbells) d.start();
while (
  Number(((await admin.query(`SELECT COUNT(*) AS n FROM \`${database}\`.sluice_doorbells`)) as any)[0][0].n) <
  doorbells.length
)
  await sleep(50);
await sleep(500);
const ringer = new Ringer({
  knex: connect({ url: url.toString(), poolMax: 1, logger }),
  tables: sluice.tables,
  events,
});
const [[threads]] = (await admin.query('SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST')) as any;

const rounds: number[] = [];
const wakes: number[] = [];
for (let r = -10; r < Number(values.rings); r++) {
  const woke = new Promise<number>((resolve) => {
    waker = () => resolve(performance.now());
  });
  const started = performance.now();
  ringer.ring('sluice_', new Map([['ring', 1]]));
  await ringer.settled();
  const settled = performance.now();
  const wokeAt = await Promise.race([woke, sleep(2_000).then(() => NaN)]);
  waker = null;
  if (r >= 0) {
    rounds.push(settled - started);
    wakes.push(wokeAt - started);
  }
  await sleep(20);
}

const ids = idle.slice(0, 3).map((c) => c.threadId);
const reads: number[] = [];
for (let r = 0; r < Number(values.rings); r++) {
  const started = performance.now();
  await admin.query(
    'SELECT ID AS id, USER AS user, COMMAND AS command, QUERY_ID AS query_id, LEFT(INFO, 128) AS info FROM information_schema.PROCESSLIST WHERE ID IN (?)',
    [ids],
  );
  reads.push(performance.now() - started);
}

process.stdout.write(
  [
    `ring cost: ${threads.n} threads on the server, ${doorbells.length} doorbells on the queue, one job per ring`,
    line('round (ring → settled)', rounds),
    line('wake (ring → onRing)', wakes.filter(Number.isFinite)),
    `missed wakes: ${wakes.filter((w) => !Number.isFinite(w)).length}`,
    line('process-list read alone', reads),
    '',
  ].join('\n'),
);

await ringer.close();
await Promise.all(doorbells.map((d) => d.stop()));
await Promise.all(idle.map((c) => c.end()));
await sluice.close();
await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
await admin.end();
