import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The files of the apps the consumer test writes into one installed app folder: each "app" is a
 * file (or a tsconfig) using the installed package the way an app would.
 */
export const APP_FILES: Record<string, string> = {
  // (a) A plain ESM JavaScript app: migrates, enqueues, runs a worker in-process until its job
  // completed, then stops on SIGINT through the package's stopOnSignals.
  'esm-app.mjs': `import { createSluice, defineJob, stopOnSignals } from 'sluice';

const sluice = createSluice({ url: process.env.MYSQL_URL, tablePrefix: 'esm_' });
await sluice.migrate();
const hello = defineJob({ name: 'hello', handle: (payload) => ({ greeted: payload.who }) });
const { id } = await sluice.enqueue(hello, { who: 'ada' });
const worker = sluice.worker({ jobs: [hello], pollIntervalMs: 100 });
sluice.events.on('job:completed', (e) => {
  if (e.jobId === id) process.stdout.write(JSON.stringify({ completed: e.jobId }) + '\\n');
});
await worker.start();
await stopOnSignals(worker);
await sluice.close();
process.stdout.write(JSON.stringify({ stopped: worker.state }) + '\\n');
`,

  // (b) A CommonJS app: require('sluice') (Node 20.19+ loads the ES module), enqueues a typed job.
  'cjs-app.cjs': `const { createSluice, defineJob, jobOf, SluiceError } = require('sluice');

(async () => {
  const sluice = createSluice({ url: process.env.MYSQL_URL, tablePrefix: 'cjs_' });
  await sluice.migrate();
  const report = defineJob({ name: 'report', queue: 'reports', handle() {} });
  const { id } = await sluice.enqueue(jobOf(report, { day: '2026-11-24' }));
  const [stats] = await sluice.queues.depth();
  await sluice.close();
  console.log(JSON.stringify({ id, stats, sluiceError: typeof SluiceError }));
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
`,

  // (c) A TypeScript app, type-checked by tsc under two resolutions with the strictest flags.
  'ts/app.ts': `import { createSluice, defineJob, jobOf, type JobContext, stopOnSignals } from 'sluice';

interface Email {
  to: string;
  subject?: string;
}

export const sendEmail = defineJob<Email>({
  name: 'send-email',
  queue: 'mail',
  async handle(payload: Email, ctx: JobContext<Email>): Promise<void> {
    ctx.logger.info({ to: payload.to }, 'sent');
  },
});

export async function main(): Promise<void> {
  const url = process.env['MYSQL_URL'];
  const sluice = createSluice(url === undefined ? {} : { url });
  await sluice.enqueue(sendEmail, { to: 'ada@example.com' });
  await sluice.enqueue(sendEmail, { to: 'ada@example.com', subject: 'hi' }, { priority: 1, delayMs: 1_000 });
  await sluice.enqueueBatch([jobOf(sendEmail, { to: 'b@example.com' }), { name: 'untyped', payload: [1, 2] }]);
  // @ts-expect-error a payload the handler does not take: to must be a string
  await sluice.enqueue(sendEmail, { to: 42 });
  // @ts-expect-error a payload the handler does not take: to is missing
  jobOf(sendEmail, { subject: 'no recipient' });
  const worker = sluice.worker({ jobs: [sendEmail], concurrency: 2 });
  sluice.events.on('job:dead', (e) => console.error(e.error.message));
  sluice.events.on('job:failed', (e) => console.error(e.error.message));
  await worker.start();
  await stopOnSignals(worker, sluice.logger);
  await sluice.close();
}
`,
  // skipLibCheck off once (sluice's .d.ts, and those they pull in, checked under these flags too).
  'ts/tsconfig.nodenext.json': JSON.stringify(tsconfig({ module: 'nodenext', moduleResolution: 'nodenext' }, false)),
  'ts/tsconfig.bundler.json': JSON.stringify(tsconfig({ module: 'esnext', moduleResolution: 'bundler' }, true)),

  // (d) The app's own job for `sluice work --jobs ./jobs` and the PM2 fleet: one row per run.
  'jobs/greet.js': `import { defineJob } from 'sluice';

export default defineJob({
  name: 'greet',
  async handle(payload, ctx) {
    await ctx.knex.raw('INSERT INTO app_greetings (job_id, n, pid) VALUES (?, ?, ?)', [ctx.job.id, payload.n, process.pid]);
  },
});
`,
  // A TypeScript job file: loads where Node strips types, and says why it does not elsewhere.
  'ts-jobs/typed.ts': `import { defineJob } from 'sluice';

export default defineJob<{ n: number }>({ name: 'typed', handle: (payload: { n: number }) => payload.n });
`,
};

function tsconfig(resolution: { module: string; moduleResolution: string }, skipLibCheck: boolean) {
  return {
    compilerOptions: {
      ...resolution,
      target: 'ES2022',
      strict: true,
      exactOptionalPropertyTypes: true,
      noPropertyAccessFromIndexSignature: true,
      noUncheckedIndexedAccess: true,
      skipLibCheck,
      noEmit: true,
      types: ['node'],
    },
    files: ['app.ts'],
  };
}

export function writeAppFiles(dir: string): void {
  for (const [path, text] of Object.entries(APP_FILES)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}
