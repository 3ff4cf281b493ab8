#!/usr/bin/env node
// The installed `sluice` command: runs the compiled CLI (npm run build, or the package's prepack).
// In the repo, `npm run sluice -- …` runs the TypeScript sources instead.
try {
  await import('../dist/src/cli/sluice.js');
} catch (error) {
  if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !String(error.message).includes('dist/src/cli/sluice.js')) throw error;
  process.stderr.write(
    'sluice: not built (no dist/): run `npm run build`, or `npm run sluice -- …` to run the sources\n',
  );
  process.exitCode = 1;
}
