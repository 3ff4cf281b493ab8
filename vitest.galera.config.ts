import { defineConfig } from 'vitest/config';

/**
 * The Galera suite (`npm run test:galera`): tests against real 3-node MariaDB Galera clusters
 * (test/cluster/galeraCluster.ts). The files that leave a cluster healthy share one, started once
 * by the globalSetup (test/cluster/sharedCluster.ts); those that kill, restart or skew a node start
 * their own. Files run one at a time: they share that cluster, the clusters of their own take the
 * same loopback ports, and the machine has two cores.
 */
export default defineConfig({
  // Job files' `import … from 'sluice'` resolves to src/index.ts (package.json's sluice-source
  // condition): the same modules the tests import, whether or not dist/ was built.
  resolve: { conditions: ['sluice-source'] },
  ssr: { resolve: { conditions: ['sluice-source'], externalConditions: ['sluice-source'] } },
  test: {
    include: ['test/galera/**/*.test.ts'],
    globalSetup: ['test/cluster/globalSetup.ts'],
    setupFiles: ['test/helpers/leakCheck.ts'],
    pool: 'forks',
    fileParallelism: false,
    maxWorkers: 1,
    testTimeout: 180_000,
    hookTimeout: 180_000,
    reporters: ['default'],
  },
});
