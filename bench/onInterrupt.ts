/**
 * What a bench puts back on the servers it changed (Redis's persistence, MariaDB's buffer pool)
 * when it is interrupted: one SIGINT/SIGTERM handler runs every restore registered and still
 * pending, waits for all of them, then exits 130. Normal paths restore in their own `finally` and
 * unregister.
 */
type Restore = () => Promise<void>;

const pending = new Set<Restore>();
let installed = false;

/** Registers `restore` to run on SIGINT or SIGTERM; the returned function unregisters it. */
export function onInterrupt(restore: Restore): () => void {
  pending.add(restore);
  if (!installed) {
    installed = true;
    for (const signal of ['SIGINT', 'SIGTERM'] as const)
      process.once(signal, () => {
        void Promise.allSettled([...pending].map((run) => run())).finally(() => process.exit(130));
      });
  }
  return () => pending.delete(restore);
}
