/**
 * `npm run bench:enqueue-cpu [-- --base DIR] [--processes 8] [--calls 200] [--rounds 8]`: client
 * CPU per single-job enqueue, against a raw autocommit INSERT of the same row, with PROCESSES
 * enqueuing processes at once (enqueueCpuChild.ts). In each process the producers (raw, then
 * --base's sluice if given, then this checkout's) take turns in blocks of CALLS awaited calls, so
 * that each sees the same host: on a shared 2-core machine the single-enqueue rate swings by 2-3×
 * from one run to the next, while CPU per call, compared within one process, holds. With 8
 * producers and the server on 2 cores, a producer's CPU per call is what bounds the rate
 * (`npm run bench:ratio` measures the rate itself). Prints the mean over processes of each
 * producer's median CPU per call and its ratio to raw.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { createConnection } from 'mysql2/promise';
import { databaseUrl, migrateSide, sidesOf } from './abSide.ts';
import { progress } from './progress.ts';

const CHILD = new URL('./enqueueCpuChild.ts', import.meta.url).pathname;
const RAW_TABLE = 'raw_jobs';

const { values: v } = parseArgs({
  options: {
    base: { type: 'string' },
    processes: { type: 'string', default: '8' },
    calls: { type: 'string', default: '200' },
    rounds: { type: 'string', default: '8' },
  },
});

function reply(child: ChildProcess): Promise<unknown> {
  return new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`enqueuer exited with ${code}`)));
  });
}

async function main(): Promise<void> {
  const url = databaseUrl(`sluice_cpu_${randomBytes(3).toString('hex')}`);
  const database = new URL(url).pathname.slice(1);
  const admin = await createConnection({ uri: databaseUrl('') });
  await admin.query(`CREATE DATABASE \`${database}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
  try {
    const sides = sidesOf(v.base, 'cpu');
    for (const side of sides) migrateSide(side, url);
    await admin.query(`CREATE TABLE \`${database}\`.\`${RAW_TABLE}\` LIKE \`${database}\`.\`${sides[0]?.prefix}jobs\``);
    const args = [CHILD, RAW_TABLE, ...sides.map((s) => `${s.root}:${s.prefix}`)];
    const env = { ...process.env, MYSQL_URL: url, ENQUEUE_CPU_CALLS: v.calls, ENQUEUE_CPU_ROUNDS: v.rounds };
    const children = Array.from({ length: Number(v.processes) }, () =>
      spawn(process.execPath, ['--import', 'tsx', ...args], { env, stdio: ['ignore', 2, 2, 'ipc'] }),
    );
    await Promise.all(children.map(reply));
    progress(`${children.length} processes, ${v.rounds} rounds of ${v.calls} calls per producer`);
    for (const child of children) child.send('go');
    const results = (await Promise.all(children.map(reply))) as { raw: number; sides: number[] }[];
    const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
    const raw = mean(results.map((r) => r.raw));
    const lines = [`raw INSERT: ${raw.toFixed(1)} µs CPU per call`];
    sides.forEach((side, i) => {
      const cpu = mean(results.map((r) => r.sides[i] ?? 0));
      lines.push(`sluice ${side.label}: ${cpu.toFixed(1)} µs CPU per call, ${(cpu / raw).toFixed(2)}× raw`);
    });
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
    await admin.end();
  }
}

await main();
