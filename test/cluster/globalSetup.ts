import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { provideSpawnBuild } from '../helpers/spawnBuild.ts';
import { killAndRemove, startCluster } from './galeraCluster.ts';

/**
 * The Galera suite's preflight, shared cluster and backstop. First, `galera.sh check`: a machine
 * without a package the suite needs (mariadb-server, galera-4, rsync, libfaketime) fails the run at
 * once, in one line naming them all, before any cluster starts. Then every cluster of the run lives
 * under one folder ($SLUICE_GALERA_ROOT, inherited by the test workers), and whatever is still there
 * when the run ends — a worker that died before its afterAll, a run stopped by Ctrl-C — is killed
 * and deleted. Last, the cluster the files that leave it healthy share (sharedCluster.ts): started
 * once here, 50 ports above the clusters the other files start for themselves, so both can run.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  checkPackages();
  const root = mkdtempSync(join(tmpdir(), 'sluice-galera-'));
  chmodSync(root, 0o711); // run as root, galera.sh runs the servers as 'mysql', which must get through
  process.env.SLUICE_GALERA_ROOT = root;
  const cleanUp = () => killAndRemove(root);
  // On SIGINT/SIGTERM vitest calls process.exit() without running teardowns; 'exit' still fires.
  process.once('exit', cleanUp);
  const basePort = Number(process.env.SLUICE_GALERA_BASE_PORT ?? 3311) + 50;
  const shared = await startCluster({ basePort, onProgress: (line) => console.log(`${line} (shared cluster)`) });
  project.provide('galeraSharedUrls', shared.urls);
  const removeBuild = await provideSpawnBuild(project);
  return async () => {
    removeBuild();
    process.off('exit', cleanUp);
    await shared.clean().finally(cleanUp);
  };
}

function checkPackages(): void {
  try {
    execFileSync('bash', [fileURLToPath(new URL('./galera.sh', import.meta.url)), 'check'], {
      stdio: ['ignore', 'ignore', 'pipe'],
      encoding: 'utf8',
    });
  } catch (error) {
    const said = String((error as { stderr?: string }).stderr ?? '').trim();
    throw new Error(`npm run test:galera: ${said.replace(/^\[galera\] ERROR: /, '') || (error as Error).message}`);
  }
}
