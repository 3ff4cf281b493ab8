/**
 * Pickup latency, every peer alike: the peer's consumer child on an empty queue; after WARM_UP
 * jobs, the parent enqueues one job at a time 100–300 ms apart (at random) and the child reports,
 * over IPC, when each handler started. Latency = handler start − the moment the parent called
 * enqueue, both read from the shared wall clock (wallNow). Delayed: each job is enqueued due
 * DELAY_MIN_MS–DELAY_MAX_MS later (at random), and latency = handler start − that due time.
 */
import { type FromChild, startChild, wallNow } from './consumerChild.ts';
import { type PeerSetting, sleep } from './peer.ts';

const WARM_UP = 3;
const PICKUP_TIMEOUT_MS = 15_000;
/** A delayed probe is due this long after it is enqueued, at random. */
const DELAY_MIN_MS = 300;
const DELAY_MAX_MS = 700;

/**
 * Enqueues one job whose payload carries `probe`, due at `dueAt` (wall-clock ms, wallNow) or, when
 * that is null, at once.
 */
export type EnqueueProbe = (probe: number, dueAt: number | null) => Promise<unknown>;

/**
 * Pickup latency on an empty queue. WARM_UP jobs first (due at once, each awaited, not counted),
 * then `samples` jobs spaced 100–300 ms apart at random, without waiting for one to start before
 * sending the next; `delayed`: each due DELAY_MIN_MS–DELAY_MAX_MS after it is sent, and measured
 * from then.
 */
export async function measurePickup(
  script: string,
  setting: PeerSetting,
  env: NodeJS.ProcessEnv,
  enqueueOne: EnqueueProbe,
  samples: number,
  delayed: boolean,
): Promise<number[]> {
  const child = await startChild(script, setting, env);
  const startedAt = new Map<number, number>();
  const waiters = new Map<number, () => void>();
  child.proc.on('message', (m: FromChild) => {
    if (m.t !== 'started') return;
    startedAt.set(m.probe, m.at);
    waiters.get(m.probe)?.();
  });
  const started = (probe: number) =>
    startedAt.has(probe)
      ? Promise.resolve()
      : new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`job ${probe} not picked up`)), PICKUP_TIMEOUT_MS);
          waiters.set(probe, () => {
            clearTimeout(timer);
            resolve();
          });
        });
  try {
    child.go();
    for (let w = 1; w <= WARM_UP; w++) {
      await enqueueOne(-w, null);
      await started(-w);
    }
    const dueAt = new Map<number, number>();
    for (let probe = 0; probe < samples; probe++) {
      await sleep(100 + Math.random() * 200);
      const now = wallNow();
      const due = delayed ? Math.round(now + DELAY_MIN_MS + Math.random() * (DELAY_MAX_MS - DELAY_MIN_MS)) : null;
      dueAt.set(probe, due ?? now);
      await enqueueOne(probe, due);
    }
    await Promise.all([...dueAt.keys()].map(started));
    await child.stop();
    return [...dueAt].map(([probe, at]) => (startedAt.get(probe) as number) - at);
  } catch (error) {
    child.proc.kill('SIGKILL');
    throw error;
  }
}
