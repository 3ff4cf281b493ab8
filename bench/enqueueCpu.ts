/**
 * `npm run bench -- enqueue-cpu [--base DIR] [--processes 8] [--calls 200] [--rounds 8]`: client
 * CPU per single-job enqueue, against a raw autocommit INSERT of the same row, with PROCESSES
 * enqueuing processes at once (enqueueCpuChild.ts), each with one sluice (--base's and this
 * checkout's alternating over the processes). In each process the raw INSERT and sluice take turns
 * in blocks of CALLS awaited calls, so that both see the same host: on a shared 2-core machine the
 * single-enqueue rate swings by 2-3× from one run to the next, while CPU per call, compared within
 * one process, holds. With 8
 * producers and the server on 2 cores, a producer's CPU per call is what bounds the rate
 * (`npm run bench -- ratio` measures the rate itself). Prints, per checkout, the mean over its
 * processes of sluice's and the raw INSERT's median CPU per call, and their ratio.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { parseArgs } from 'node:util';
import { migrateSide, sidesOf, withScratchDatabase } from './abSide.ts';
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
  await withScratchDatabase('cpu', async (url, database, admin) => {
    const sides = sidesOf(v.base, 'cpu');
    for (const side of sides) migrateSide(side, url);
    await admin.query(`CREATE TABLE \`${database}\`.\`${RAW_TABLE}\` LIKE \`${database}\`.\`${sides[0]?.prefix}jobs\``);
    const keys = sides.map((s) => `${s.root}:${s.prefix}`);
    const env = { ...process.env, MYSQL_URL: url, ENQUEUE_CPU_CALLS: v.calls, ENQUEUE_CPU_ROUNDS: v.rounds };
    // One checkout per process, the sides alternating over the processes: two copies of sluice in one
    // process make both dearer per call (shared mysql2 and knex code sees two callers), and the one
    // loaded second the dearer (same code at two paths: 1.4×).
    const children = Array.from({ length: Number(v.processes) }, (_, i) =>
      spawn(process.execPath, ['--import', 'tsx', CHILD, RAW_TABLE, keys[i % keys.length] as string], {
        env,
        stdio: ['ignore', 2, 2, 'ipc'],
      }),
    );
    await Promise.all(children.map(reply));
    progress(`${children.length} processes, ${v.rounds} rounds of ${v.calls} calls per producer`);
    for (const child of children) child.send('go');
    const results = (await Promise.all(children.map(reply))) as Record<string, number>[];
    const lines: string[] = [];
    sides.forEach((side, i) => {
      const own = results.filter((r) => r[keys[i] as string] !== undefined);
      const mean = (key: string) => own.reduce((sum, r) => sum + (r[key] ?? 0), 0) / own.length;
      const raw = mean('raw');
      const cpu = mean(keys[i] as string);
      lines.push(
        `${side.label}: sluice ${cpu.toFixed(1)} µs, raw INSERT ${raw.toFixed(1)} µs CPU per call in the same ` +
          `${own.length} processes: ${(cpu / raw).toFixed(2)}× raw`,
      );
    });
    process.stdout.write(`${lines.join('\n')}\n`);
  });
}

await main();
