import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './sourceCli.ts';

const run = promisify(execFile);

export interface PackedApp {
  /** The app's folder: package.json, node_modules/sluice installed from the tarball. */
  readonly dir: string;
  readonly tarball: string;
  /** The package.json inside the tarball. */
  readonly manifest: { name: string; version: string; dependencies: Record<string, string> };
}

interface LockEntry {
  readonly dev?: boolean;
  readonly [field: string]: unknown;
}

/**
 * Builds and packs the package (`npm pack`: its prepack runs `npm run build`), then installs the
 * tarball into a new app folder the way an app does, with npm, offline: the app gets a
 * package-lock.json listing the tarball and the production packages of the repo's own lock
 * (every entry not marked dev), and `npm ci --offline` installs them from npm's cache, which the
 * repo's own `npm ci` filled. A runtime dependency missing from package.json (or kept in
 * devDependencies) is therefore missing in the app too. `npm install <tarball> --offline` would
 * need the registry's metadata for every dependency, which `npm ci` does not cache.
 */
export async function installPackedApp(): Promise<PackedApp> {
  const packDir = mkdtempSync(join(tmpdir(), 'sluice-pack-'));
  const { stdout } = await run('npm', ['pack', '--pack-destination', packDir, '--no-audit', '--no-fund'], {
    cwd: ROOT,
    maxBuffer: 16 * 1024 * 1024,
  });
  const tarball = join(packDir, stdout.trim().split('\n').pop() as string);
  const { stdout: manifestText } = await run('tar', ['-xzOf', tarball, 'package/package.json']);
  const manifest = JSON.parse(manifestText) as PackedApp['manifest'] & Record<string, unknown>;

  const dir = mkdtempSync(join(tmpdir(), 'sluice-app-'));
  const spec = `file:${tarball}`;
  const repoLock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockEntry>;
  };
  const packages: Record<string, unknown> = {
    '': { name: 'app', version: '1.0.0', dependencies: { sluice: spec } },
  };
  for (const [path, entry] of Object.entries(repoLock.packages)) {
    if (path !== '' && !entry.dev) packages[path] = entry;
  }
  packages['node_modules/sluice'] = {
    version: manifest.version,
    resolved: spec,
    integrity: `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`,
    license: manifest.license,
    dependencies: manifest.dependencies,
    bin: manifest.bin,
    engines: manifest.engines,
  };
  writeFileSync(
    join(dir, 'package.json'),
    `${JSON.stringify({ name: 'app', version: '1.0.0', private: true, type: 'module', dependencies: { sluice: spec } }, null, 2)}\n`,
  );
  writeFileSync(
    join(dir, 'package-lock.json'),
    `${JSON.stringify({ name: 'app', version: '1.0.0', lockfileVersion: 3, requires: true, packages }, null, 2)}\n`,
  );
  try {
    await run('npm', ['ci', '--offline', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: dir });
  } catch (error) {
    const { stderr } = error as { stderr?: string };
    throw new Error(
      `npm ci --offline of ${basename(tarball)} failed (is npm's cache filled? run \`npm ci\` in the repo first):\n${stderr}`,
    );
  }
  return { dir, tarball, manifest };
}
