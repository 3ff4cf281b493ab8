import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * sluice's version, from the package.json of the package this file belongs to: the nearest one
 * above it named "sluice" (src/cli/ in the repo, dist/src/cli/ once built and installed).
 */
export function packageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'sluice' && pkg.version) return pkg.version;
    } catch {
      // no package.json here: keep climbing
    }
    const parent = dirname(dir);
    if (parent === dir) return 'unknown';
    dir = parent;
  }
}
