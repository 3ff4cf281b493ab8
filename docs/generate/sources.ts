/**
 * Where the generated references come from. When the options files or the CLI's dispatcher move,
 * edit the paths here (and nothing else): `npm run docs` regenerates docs/reference/, and
 * test/docs/references.test.ts fails until the committed pages match.
 */

/** One public options type: the file that declares it, its name, and the call that takes it. */
export interface OptionsSource {
  /** Path from the repository root. */
  readonly file: string;
  /** An exported interface of that file. Its doc comments and `@defaultValue` tags make the table. */
  readonly name: string;
  /** The call that takes it, as the page names it. */
  readonly takenBy: string;
}

/**
 * Every public options type, in the order docs/reference/options.md lists them. Each `*Options.ts`
 * file under src/ must appear here (a test checks), and every exported `…Options` interface of a
 * listed file must be listed (the generator checks).
 */
export const OPTIONS_SOURCES: readonly OptionsSource[] = [
  { file: 'src/options.ts', name: 'SluiceOptions', takenBy: 'createSluice(options)' },
  { file: 'src/model/defineJob.ts', name: 'JobDefinition', takenBy: 'defineJob(definition)' },
  { file: 'src/model/job.ts', name: 'JobSpec', takenBy: 'sluice.enqueue(job), sluice.enqueueBatch(jobs), jobOf(…)' },
  { file: 'src/enqueue/enqueueBatch.ts', name: 'EnqueueOptions', takenBy: 'sluice.enqueue(…, options)' },
  { file: 'src/enqueue/enqueueBatch.ts', name: 'EnqueueBatchOptions', takenBy: 'sluice.enqueueBatch(jobs, options)' },
  {
    file: 'src/enqueue/enqueueStream.ts',
    name: 'EnqueueStreamOptions',
    takenBy: 'sluice.enqueueStream(chunks, options)',
  },
  { file: 'src/worker/workerOptions.ts', name: 'WorkerOptions', takenBy: 'sluice.worker(options)' },
  { file: 'src/worker/ConcurrencyLimit.ts', name: 'LoadPolicy', takenBy: 'sluice.worker({ loadPolicy })' },
  { file: 'src/maintenance/maintenanceOptions.ts', name: 'MaintenanceOptions', takenBy: 'sluice.maintenance(options)' },
  { file: 'src/dashboard/dashboardOptions.ts', name: 'DashboardOptions', takenBy: 'sluice.dashboard(options)' },
  { file: 'src/dashboard/basicAuth.ts', name: 'BasicAuthCredentials', takenBy: 'basicAuth(credentials)' },
  { file: 'src/queues/validateLimits.ts', name: 'QueueLimits', takenBy: 'sluice.queues.setLimits(queue, limits)' },
  {
    file: 'src/groups/groupLimits.ts',
    name: 'GroupLimits',
    takenBy: 'sluice.queues.setGroupLimits(queue, group, limits)',
  },
  { file: 'src/queues/queuePromises.ts', name: 'QueuePromise', takenBy: 'sluice.queues.setPromise(queue, promise)' },
  { file: 'src/snoozeErrors.ts', name: 'RateLimitedOptions', takenBy: 'new RateLimitedError(retryAfterMs, options)' },
  { file: 'src/jobControl/jobFilter.ts', name: 'JobFilter', takenBy: 'sluice.jobs.list / count / cancel(filter)' },
  { file: 'src/jobControl/listJobs.ts', name: 'JobPage', takenBy: 'sluice.jobs.list(filter, page)' },
  { file: 'src/jobControl/waitForJob.ts', name: 'WaitOptions', takenBy: 'sluice.jobs.waitFor(id, options)' },
  { file: 'src/jobControl/jobChanges.ts', name: 'ChangesOptions', takenBy: 'sluice.jobs.changes(options)' },
  {
    file: 'src/deadJobs/deadJobFilter.ts',
    name: 'DeadJobFilter',
    takenBy: 'sluice.deadJobs.list / redrive / purge(filter)',
  },
  {
    file: 'src/testing/performJob.ts',
    name: 'PerformOptions',
    takenBy: "performJob(…, options), from 'sluice/testing'",
  },
  {
    file: 'src/testing/enqueuedJobs.ts',
    name: 'EnqueuedFilter',
    takenBy: "enqueuedJobs / assertEnqueued / refuteEnqueued(sluice, filter), from 'sluice/testing'",
  },
  {
    file: 'src/testing/enqueuedJobs.ts',
    name: 'EnqueuedOptions',
    takenBy: "enqueuedJobs / refuteEnqueued(…, options), from 'sluice/testing'",
  },
  {
    file: 'src/testing/enqueuedJobs.ts',
    name: 'AssertEnqueuedOptions',
    takenBy: "assertEnqueued(…, options), from 'sluice/testing'",
  },
  {
    file: 'src/testing/drainQueues.ts',
    name: 'DrainOptions',
    takenBy: "drainQueues(sluice, options), from 'sluice/testing'",
  },
];

/** The CLI's dispatcher: exports `main(argv)`, which prints `sluice --help` and each command's own help. */
export const CLI_MAIN = 'src/cli/main.ts';

/** The pages written by `npm run docs`, from the repository root. */
export const OPTIONS_PAGE = 'docs/reference/options.md';
export const CLI_PAGE = 'docs/reference/cli.md';
export const API_PAGE = 'docs/reference/api.md';

/** One entry point of the package, whose exports make the method reference. */
export interface ApiEntry {
  /** Path from the repository root. */
  readonly file: string;
  /** How an application imports it. */
  readonly importFrom: string;
  /** What the entry's functions are for, as the page says it. */
  readonly summary: string;
  /** `Class.member` properties whose calls get a section of their own (`sluice.jobs.get`, …). */
  readonly namespaces: readonly string[];
  /** Its classes, in the order the page lists them (an exported class left out is an error). */
  readonly classes: readonly string[];
  /** The classes an application constructs itself: the page shows their constructor. */
  readonly constructible: readonly string[];
  /** The name the page gives an instance of a class, when not the class name in lower camel case. */
  readonly instanceName: Readonly<Record<string, string>>;
}

/**
 * The entries of the package, in the order docs/reference/api.md lists them: each exported function,
 * each exported class (its public members) and each error class. A namespace of `Sluice` left out of
 * `namespaces` would be listed as one property; a test checks that each is there.
 */
export const API_ENTRIES: readonly ApiEntry[] = [
  {
    file: 'src/index.ts',
    importFrom: 'sluice',
    summary: 'An install, job definitions, the dashboard hook and shutdown on signals.',
    namespaces: [
      'Sluice.jobs',
      'Sluice.queues',
      'Sluice.batches',
      'Sluice.deadJobs',
      'Sluice.workers',
      'Sluice.history',
      'Sluice.schedules',
      'Sluice.settings',
    ],
    classes: ['Sluice', 'Worker', 'Maintenance', 'SluiceEvents', 'SluiceMetrics'],
    constructible: ['Sluice', 'SluiceMetrics'],
    instanceName: { SluiceMetrics: 'metrics', SluiceEvents: 'sluice.events' },
  },
  {
    file: 'src/testing/index.ts',
    importFrom: 'sluice/testing',
    summary: "Helpers for an application's tests, against a real database: [Testing](../testing.md).",
    namespaces: [],
    classes: [],
    constructible: [],
    instanceName: {},
  },
];
