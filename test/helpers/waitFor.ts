import { setTimeout as sleep } from 'node:timers/promises';

/** Polls `condition` until it returns a truthy value or the deadline passes (no fixed sleeps in tests). */
export async function waitFor<T>(
  condition: () => Promise<T> | T,
  {
    timeoutMs = 30_000,
    intervalMs = 50,
    what = 'condition',
  }: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  for (;;) {
    last = await condition();
    if (last) return last as NonNullable<T>;
    if (Date.now() > deadline)
      throw new Error(`waitFor: ${what} not met within ${timeoutMs} ms (last value: ${JSON.stringify(last)})`);
    await sleep(intervalMs);
  }
}
