import type { QueueLimits } from '../api/queuesApi.ts';
import { intFlag } from './parse.ts';
import { UsageError } from './UsageError.ts';

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };
const RATE = /^(\d+)\/(\d*)(ms|s|m|h)$/;

/**
 * Pure: the limits `sluice queue limit` was given: `--concurrency N` (or `none`), `--rate N/DURATION`
 * (`100/1m`, `5/500ms`, `20/s`; or `none`), `--group-rate N/DURATION` (each group's; or `none`). A
 * flag left out leaves that limit as it is.
 */
export function limitFlags(v: { concurrency?: string; rate?: string; 'group-rate'?: string }): QueueLimits {
  const limits: { concurrency?: number | null; rate?: QueueLimits['rate']; groupRate?: QueueLimits['groupRate'] } = {};
  if (v.concurrency !== undefined)
    limits.concurrency = v.concurrency === 'none' ? null : (intFlag('concurrency', v.concurrency, 1) as number);
  if (v.rate !== undefined) limits.rate = v.rate === 'none' ? null : parseRate(v.rate);
  const groupRate = v['group-rate'];
  if (groupRate !== undefined) limits.groupRate = groupRate === 'none' ? null : parseRate(groupRate, '--group-rate');
  if (limits.concurrency === undefined && limits.rate === undefined && limits.groupRate === undefined)
    throw new UsageError('limit needs --concurrency N, --rate N/DURATION, --group-rate N/DURATION, or one set to none');
  return limits;
}

/** Pure: `N/DURATION` as a rate: `100/1m` is 100 starts per 60,000 ms; `20/s` per 1,000 ms. */
export function parseRate(text: string, flag = '--rate'): { limit: number; intervalMs: number } {
  const match = RATE.exec(text.trim());
  if (!match)
    throw new UsageError(`${flag} must be N/DURATION, e.g. 100/1m, 5/500ms or 20/s (got ${JSON.stringify(text)})`);
  const [, limit, count, unit] = match as unknown as [string, string, string, string];
  const intervalMs = (count === '' ? 1 : Number(count)) * (UNIT_MS[unit] as number);
  if (Number(limit) < 1 || intervalMs < 1)
    throw new UsageError(`${flag} needs at least 1 start per at least 1 ms (got ${JSON.stringify(text)})`);
  return { limit: Number(limit), intervalMs };
}
