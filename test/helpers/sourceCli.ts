import { fileURLToPath } from 'node:url';

/** The repo's root: child processes run here unless a test says otherwise. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Node arguments that run the `sluice` command from the TypeScript sources, as `npm run sluice`
 * does, from any working folder: tsx loads .ts, and the `sluice-source` condition makes job files' `import … from 'sluice'`
 * resolve to src/index.ts (the same modules the command runs), not to a build in dist/.
 */
export const SOURCE_CLI: readonly string[] = [
  '--import',
  fileURLToPath(new URL('./registerTsx.mjs', import.meta.url)),
  '--conditions=sluice-source',
  fileURLToPath(new URL('../../src/cli/sluice.ts', import.meta.url)),
];
