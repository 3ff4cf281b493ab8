import mysql from 'mysql2/promise';
import { inject } from 'vitest';
import type { GaleraCluster } from './galeraCluster.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The SQL URLs of the cluster the Galera suite's globalSetup started for every file to share. */
    galeraSharedUrls: readonly string[];
  }
}

/**
 * The Galera suite's shared cluster, for the files that leave a cluster as they found it: every
 * node up, Synced, in a cluster of 3 (files that kill, restart or skew a node start their own).
 * Started once by test/cluster/globalSetup.ts; each file still works in a database of its own
 * (clusterDatabase). Checks the cluster first, so that a file never runs on a cluster an earlier
 * file left degraded: it fails at once, naming each node's state.
 */
export async function sharedCluster(): Promise<Pick<GaleraCluster, 'urls'>> {
  const urls = inject('galeraSharedUrls');
  const states = await Promise.all(urls.map((uri) => wsrepState(uri)));
  const degraded = states.filter((s) => s.state !== 'ON 3 Synced');
  if (degraded.length > 0)
    throw new Error(`the shared Galera cluster is not healthy: ${states.map((s) => `${s.uri} ${s.state}`).join('; ')}`);
  return { urls };
}

/** "ready size state" of one node, e.g. "ON 3 Synced", or the error it answered with. */
async function wsrepState(uri: string): Promise<{ uri: string; state: string }> {
  let connection: mysql.Connection | undefined;
  try {
    connection = await mysql.createConnection({ uri, connectTimeout: 5_000 });
    const [rows] = (await connection.query(
      "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_ready', 'wsrep_cluster_size', 'wsrep_local_state_comment')",
    )) as unknown as [{ Variable_name: string; Value: string }[]];
    const value = (name: string) => rows.find((r) => r.Variable_name === name)?.Value ?? '?';
    return {
      uri,
      state: `${value('wsrep_ready')} ${value('wsrep_cluster_size')} ${value('wsrep_local_state_comment')}`,
    };
  } catch (error) {
    return { uri, state: `unreachable (${(error as Error).message})` };
  } finally {
    await connection?.end().catch(() => undefined);
  }
}
