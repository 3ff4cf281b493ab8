import { fileURLToPath } from 'node:url';

/**
 * The `sluice` command from the sources, after the `--import tsx` its spawners put first: the
 * `sluice-source` condition points the bench jobs' `import … from 'sluice'` at src/index.ts.
 */
export const SLUICE_CLI: readonly string[] = [
  '--conditions=sluice-source',
  fileURLToPath(new URL('../src/cli/sluice.ts', import.meta.url)),
];
