import { nearestName } from '../nearestName.ts';
import { describeFailure, EXIT } from './describeFailure.ts';
import { packageVersion } from './packageVersion.ts';
import { terminalText } from './terminalText.ts';

/** A command of the `sluice` CLI: its line in `sluice --help`, and its module, loaded only to run it. */
interface CommandEntry {
  readonly summary: string;
  load(): Promise<(argv: string[]) => Promise<number>>;
}

/**
 * The registry. A command is one file in src/cli/ exporting `xCommand(argv): Promise<number>` and
 * its help text, plus one entry here. Commands load lazily, so `sluice --help` and each command's
 * own help never import knex, mysql2 or pino (a command file loads the library through
 * openSluice() only once it runs).
 */
const COMMANDS: Record<string, CommandEntry> = {
  init: {
    summary: 'write ecosystem.config.cjs (PM2: workers + maintenance) into this folder',
    load: async () => (await import('./initCommand.ts')).initCommand,
  },
  migrate: {
    summary: 'apply pending schema migrations',
    load: async () => (await import('./migrateCommand.ts')).migrateCommand,
  },
  enqueue: {
    summary: 'enqueue jobs from NDJSON (a file or stdin), with progress',
    load: async () => (await import('./enqueueCommand.ts')).enqueueCommand,
  },
  work: {
    summary: 'run a worker on the job files of --jobs DIR (PM2: the worker app)',
    load: async () => (await import('./workCommand.ts')).workCommand,
  },
  maintenance: {
    summary: 'recover crashed claims, finish batches, prune, enqueue schedules (PM2: one app)',
    load: async () => (await import('./maintenanceCommand.ts')).maintenanceCommand,
  },
  stats: { summary: 'jobs per queue', load: async () => (await import('./statsCommand.ts')).statsCommand },
  dead: {
    summary: 'list, re-drive or purge dead jobs',
    load: async () => (await import('./deadCommand.ts')).deadCommand,
  },
  queue: { summary: 'pause or resume a queue', load: async () => (await import('./queueCommand.ts')).queueCommand },
  workers: {
    summary: 'the worker fleet (registry)',
    load: async () => (await import('./workersCommand.ts')).workersCommand,
  },
  jobs: {
    summary: 'look up, list, count, cancel, run now or wait for jobs',
    load: async () => (await import('./jobsCommand.ts')).jobsCommand,
  },
  settings: {
    summary: "the install's settings every process follows: history and dead-job retention",
    load: async () => (await import('./settingsCommand.ts')).settingsCommand,
  },
  schedules: {
    summary: 'recurring jobs with their next and last slot',
    load: async () => (await import('./schedulesCommand.ts')).schedulesCommand,
  },
  dashboard: {
    summary: 'the web dashboard: queues, jobs, dead jobs, workers, batches, schedules (127.0.0.1, auth)',
    load: async () => (await import('./dashboardCommand.ts')).dashboardCommand,
  },
  metrics: {
    summary: 'Prometheus metrics on GET /metrics',
    load: async () => (await import('./metricsCommand.ts')).metricsCommand,
  },
  demo: {
    summary: 'a self-contained demo: 10,000 jobs in one batch, drained by 2 worker processes, exactly once',
    load: async () => (await import('./demoCommand.ts')).demoCommand,
  },
};

function helpText(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length)) + 2;
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}${c.summary}`);
  return `sluice ${packageVersion()}: a batch-transactional MySQL/MariaDB job runner

usage: sluice <command> [options]       sluice <command> --help for its options

${lines.join('\n')}

The database comes from MYSQL_URL (or MYSQL_URL_FILE, or --url); none is guessed.
Exit codes: 0 success, 1 failure (server down, bad password, missing file, port in use, …),
2 usage error (unknown command or flag, malformed value). --verbose or DEBUG=1 prints stacks.`;
}

/** argv parsing and dispatch only. Returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === '--version' || command === '-v' || command === '-V') {
    process.stdout.write(`${packageVersion()}\n`);
    return EXIT.ok;
  }
  if (command === '--help' || command === '-h') return printHelp(EXIT.ok);
  if (command === undefined) return printHelp(EXIT.usage);
  if (command === 'help') return rest[0] && COMMANDS[rest[0]] ? main([rest[0], '--help']) : printHelp(EXIT.ok);
  const entry = COMMANDS[command];
  if (!entry) {
    const nearest = nearestName(command, Object.keys(COMMANDS));
    const what = command.startsWith('-') ? 'option' : 'command';
    process.stderr.write(
      `sluice: unknown ${what} "${command}"${nearest ? ` (did you mean ${nearest}?)` : ''}; sluice --help lists the commands\n`,
    );
    return EXIT.usage;
  }
  try {
    const run = await entry.load();
    return await run(rest);
  } catch (error) {
    const failure = describeFailure(error);
    const hint = failure.exitCode === EXIT.usage ? ` (sluice ${command} --help)` : '';
    process.stderr.write(`sluice ${command}: ${terminalText(failure.line)}${hint}\n`);
    if (rest.includes('--verbose') || isDebug())
      process.stderr.write(`${failure.details.split('\n').map(terminalText).join('\n')}\n`);
    return failure.exitCode;
  }
}

function printHelp(exitCode: number): number {
  (exitCode === EXIT.ok ? process.stdout : process.stderr).write(`${helpText()}\n`);
  return exitCode;
}

/** DEBUG set to anything but empty, 0 or false. */
function isDebug(): boolean {
  const value = process.env.DEBUG;
  return value !== undefined && value !== '' && value !== '0' && value.toLowerCase() !== 'false';
}
