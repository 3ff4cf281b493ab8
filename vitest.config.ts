import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  // Job files' `import … from 'sluice'` resolves to src/index.ts (package.json's sluice-source
  // condition): the same modules the tests import, whether or not dist/ was built.
  resolve: { conditions: ['sluice-source'] },
  ssr: { resolve: { conditions: ['sluice-source'], externalConditions: ['sluice-source'] } },
  test: {
    include: ['test/**/*.test.ts'],
    // test/galera/ needs a Galera cluster of its own: `npm run test:galera` (vitest.galera.config.ts).
    exclude: [...configDefaults.exclude, 'test/galera/**'],
    globalSetup: ['test/globalSetup.ts'],
    setupFiles: ['test/helpers/leakCheck.ts'],
    // Every file works in its own database; process tests spawn their own workers.
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
    testTimeout: 120_000,
    hookTimeout: 120_000,
    reporters: ['default'],
  },
});
