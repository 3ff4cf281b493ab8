import type { QueueLimits } from '../api/queuesApi.ts';
import { intFlag } from './parse.ts';
import { UsageError } from './UsageError.ts';

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };
const RATE = /^(\d+)\/(\d*)(ms|s|m|h)$/;

/**
 * Pure: the limits `sluice queue limit` was given: `--concurrency N` (or `none`), `--rate N/DURATION`
 * (`100/1m`, `5/500ms`, `20/s`; or `none`), `--group-concurrency N` and `--group-rate N/DURATION`
 * (each group's; or `none`), `--fair` / `--no-fair` with `--fair-window N`. A flag left out leaves that limit as it is.
 */
export function limitFlags(v: {
  concurrency?: string;
  rate?: string;
  'group-concurrency'?: string;
  'group-rate'?: string;
  fair?: boolean;
  'no-fair'?: boolean;
  'fair-window'?: string;
}): QueueLimits {
  const limits: {
    concurrency?: number | null;
    rate?: QueueLimits['rate'];
    groupConcurrency?: number | null;
    groupRate?: QueueLimits['groupRate'];
    fair?: boolean;
    fairWindow?: number;
  } = {};
  if (v.concurrency !== undefined)
    limits.concurrency = v.concurrency === 'none' ? null : (intFlag('concurrency', v.concurrency, 1) as number);
  if (v.rate !== undefined) limits.rate = v.rate === 'none' ? null : parseRate(v.rate);
  const group = v['group-concurrency'];
  if (group !== undefined)
    limits.groupConcurrency = group === 'none' ? null : (intFlag('group-concurrency', group, 1) as number);
  const groupRate = v['group-rate'];
  if (groupRate !== undefined) limits.groupRate = groupRate === 'none' ? null : parseRate(groupRate, '--group-rate');
  if (v.fair && v['no-fair']) throw new UsageError('--fair and --no-fair contradict each other');
  if (v.fair || v['no-fair']) limits.fair = v.fair === true;
  if (v['fair-window'] !== undefined) {
    if (!v.fair) throw new UsageError('--fair-window goes with --fair');
    limits.fairWindow = intFlag('fair-window', v['fair-window'], 1) as number;
  }
  if (Object.keys(limits).length === 0)
    throw new UsageError(
      'limit needs --concurrency N, --rate N/DURATION, --group-concurrency N, --group-rate N/DURATION (each may be none), --fair or --no-fair',
    );
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
