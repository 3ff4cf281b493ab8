// The layers of src/, top to bottom (docs/architecture.md explains each). A module may import
// from its own layer or any layer below it, never from a layer above; no import cycles at all
// (type-only imports count). `npm run lint` runs this.
const LAYERS = [
  ['surfaces: the CLI, and the demo and throwaway server it runs', '^src/(cli|demo)/'],
  ['the package entries (sluice, sluice/testing) and the metrics endpoint', '^src/(index\\.ts|testing/|metrics/)'],
  ['the facade, and the runtime it opens', '^src/(Sluice|openRuntime)\\.ts$'],
  ['the dashboard (reads and acts through the public surface only)', '^src/dashboard/'],
  ['the public surface, one namespace per noun', '^src/api/'],
  ['the maintenance process', '^src/maintenance/'],
  ['the worker process and the scheduler', '^src/(worker|scheduler)/'],
  ['queue depth, read through the job walks', '^src/stats/'],
  ['operations that write and read jobs', '^src/(enqueue|jobControl)/'],
  ['operations on the other tables, and workflow edges and holds', '^src/(batches|deadJobs|history|workflows)/'],
  ['queues, groups, idempotency keys and trace contexts', '^src/(queues|groups|idempotency|tracing)/'],
  ['what every operation of an install shares', '^src/sluiceRuntime\\.ts$'],
  ['the install settings every process follows', '^src/settings/'],
  ['wake-ups', '^src/wakeups/'],
  [
    "a job's rules and shared shapes",
    '^src/(model/|task/|events\\.ts|logging\\.ts|options\\.ts|payloadRedactor\\.ts|redactPayload\\.ts|shutdown\\.ts|snoozeErrors\\.ts)',
  ],
  ['the database seam', '^src/db/'],
  [
    'errors, and the one bound every payload reader and the options share',
    '^src/(errors|errorText|nearestName|maxPayloadBytes)\\.ts$',
  ],
];

const upward = [];
for (let low = 1; low < LAYERS.length; low++) {
  for (let high = 0; high < low; high++) {
    upward.push({
      name: `upward: ${LAYERS[low][0]} -> ${LAYERS[high][0]}`,
      severity: 'error',
      comment: 'imports run one way: down the layers listed in .dependency-cruiser.cjs',
      from: { path: LAYERS[low][1] },
      to: { path: LAYERS[high][1] },
    });
  }
}

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'no import cycles, type-only imports included',
      from: {},
      to: { circular: true },
    },
    {
      name: 'in-a-layer',
      severity: 'error',
      comment: 'every module of src/ belongs to a layer of .dependency-cruiser.cjs',
      from: { path: '^src/', pathNot: LAYERS.map(([, path]) => path) },
      to: {},
    },
    {
      name: 'testing-apart',
      severity: 'error',
      comment:
        "sluice/testing is an entry of its own: nothing else in src/ imports it, so `import 'sluice'` never loads it",
      from: { path: '^src/', pathNot: '^src/testing/' },
      to: { path: '^src/testing/' },
    },
    ...upward,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'], conditionNames: ['sluice-source', 'import', 'default'] },
    exclude: { path: '(^|/)(node_modules|dist)/' },
  },
};
