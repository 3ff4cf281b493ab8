import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killAndRemove } from './galeraCluster.ts';

/**
 * The Galera suite's backstop: every cluster of the run lives under one folder
 * ($SLUICE_GALERA_ROOT, inherited by the test workers), and whatever is still there when the run
 * ends — a worker that died before its afterAll, a run stopped by Ctrl-C — is killed and deleted.
 */
export default function setup(): () => void {
  const root = mkdtempSync(join(tmpdir(), 'sluice-galera-'));
  chmodSync(root, 0o711); // run as root, galera.sh runs the servers as 'mysql', which must get through
  process.env.SLUICE_GALERA_ROOT = root;
  const cleanUp = () => killAndRemove(root);
  // On SIGINT/SIGTERM vitest calls process.exit() without running teardowns; 'exit' still fires.
  process.once('exit', cleanUp);
  return () => {
    process.off('exit', cleanUp);
    cleanUp();
  };
}
