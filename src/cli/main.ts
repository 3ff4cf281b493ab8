import { SluiceError } from '../errors.ts';
import { deadCommand } from './deadCommand.ts';
import { demoCommand } from './demoCommand.ts';
import { enqueueCommand } from './enqueueCommand.ts';
import { metricsCommand } from './metricsCommand.ts';
import { migrateCommand } from './migrateCommand.ts';
import { queueCommand } from './queueCommand.ts';
import { statsCommand } from './statsCommand.ts';
import { sweepCommand } from './sweepCommand.ts';
import { workCommand } from './workCommand.ts';
import { workersCommand } from './workersCommand.ts';

const COMMANDS: Record<string, (argv: string[]) => Promise<number>> = {
  migrate: migrateCommand,
  enqueue: enqueueCommand,
  work: workCommand,
  sweep: sweepCommand,
  stats: statsCommand,
  dead: deadCommand,
  queue: queueCommand,
  workers: workersCommand,
  metrics: metricsCommand,
  demo: demoCommand,
};

const HELP = `sluice: a batch-transactional MySQL/MariaDB job runner

usage: sluice <command> [options]      (sluice <command> --help for its options)

  migrate   apply pending schema migrations
  enqueue   enqueue jobs from NDJSON (a file or stdin), with progress
  work      run a worker (PM2: the worker app)
  sweep     run the maintenance process: leader-elected sweeper (PM2: the maintenance app)
  stats     jobs per queue
  dead      list, re-drive or purge dead jobs
  queue     pause or resume a queue
  workers   the worker fleet (registry)
  metrics   Prometheus metrics on GET /metrics
  demo      migrate, enqueue 10,000 jobs in one batch, drain them with 2 worker processes, prove exactly-once

The database comes from --url, else MYSQL_URL, else mysql://root@127.0.0.1:3306/test.`;

/** argv parsing and dispatch only. Returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(`${HELP}\n`);
    return command ? 0 : 2;
  }
  const run = COMMANDS[command];
  if (!run) {
    process.stderr.write(`sluice: unknown command "${command}"\n\n${HELP}\n`);
    return 2;
  }
  try {
    return await run(rest);
  } catch (error) {
    const message = error instanceof SluiceError ? `${error.code}: ${error.message}` : (error as Error).stack ?? String(error);
    process.stderr.write(`sluice ${command}: ${message}\n`);
    return 1;
  }
}
