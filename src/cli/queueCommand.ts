import type { QueueLimits } from '../api/queuesApi.ts';
import { limitFlags } from './limitFlags.ts';
import { openSluice } from './openSluice.ts';
import { COMMON_HELP, choice, help, intFlag, parse } from './parse.ts';
import { terminalJson } from './terminalText.ts';
import { UsageError } from './UsageError.ts';

export const QUEUE_HELP = `sluice queue: pause or resume claiming from a queue; set its limits and latency promise

  sluice queue pause NAME     no worker claims from NAME; running jobs finish
  sluice queue resume NAME
  sluice queue paused [--after NAME]
                              list paused queues, 1,000 at a time in name order; "next" names
                              the --after of the next page (null: none)
  sluice queue promise NAME [--start-within-ms N] [--max-ready N]
                              promise that a ready job of NAME starts within N ms (its oldest
                              ready job's wait) and that at most N jobs are ready: the
                              maintenance process logs once when the promise breaks, and once
                              when it is kept again (the dashboard and the metrics show it)
  sluice queue promise NAME --none
                              withdraw NAME's promise
  sluice queue promises [--after NAME]
                              list promises, each with since when it is broken (null: kept),
                              1,000 at a time in name order; "next" as for paused
  sluice queue limit NAME [--concurrency N] [--rate N/DURATION] [--group-rate N/DURATION]
                              at most N jobs of NAME running at once across the fleet; at most N
                              starts per DURATION (100/1m, 5/500ms, 20/s); at most N starts per
                              DURATION for each group of NAME (reserved as jobs are enqueued).
                              Workers pick it up without a restart. A flag left out stays as
                              it is; none removes it
  sluice queue limit NAME [--group-concurrency N] [--fair [--fair-window N] | --no-fair]
                              at most N jobs of each group of NAME (JobSpec.group) at once,
                              unless the group has a limit of its own; --fair: groups take turns
                              (each keeps at most the window, 500 by default, of jobs queued)
  sluice queue limits         list limited queues with their use: running, starts this window,
                              and what holds their jobs back now (concurrency, rate, paused)
  sluice queue groups NAME [--after GROUP] [--max N]
                              NAME's groups in key order, each with its own limit, the limit in
                              force and its slots taken; its own rate, the rate in force, the
                              starts reserved in this window, the earliest start of a job
                              enqueued now, its pause (at most N, default 100, up to 1000)
  sluice queue group-limit NAME GROUP --concurrency N|none
                              one group's own limit; its held jobs the new limit has room for
                              start at once
${COMMON_HELP}`;

const ACTIONS = [
  'pause',
  'resume',
  'paused',
  'promise',
  'promises',
  'limit',
  'limits',
  'groups',
  'group-limit',
] as const;
const NAMED: readonly string[] = ['pause', 'resume', 'promise', 'limit', 'groups', 'group-limit'];

export async function queueCommand(argv: string[]): Promise<number> {
  const { values: v, positionals } = parse(
    argv,
    {
      'start-within-ms': { type: 'string' },
      'max-ready': { type: 'string' },
      none: { type: 'boolean' },
      concurrency: { type: 'string' },
      rate: { type: 'string' },
      'group-concurrency': { type: 'string' },
      'group-rate': { type: 'string' },
      fair: { type: 'boolean' },
      'no-fair': { type: 'boolean' },
      'fair-window': { type: 'string' },
      after: { type: 'string' },
      max: { type: 'string' },
    },
    3,
  );
  if (v.help) return help(QUEUE_HELP);
  const action = choice('action', positionals[0], ACTIONS);
  const name = positionals[1];
  if (NAMED.includes(action) && !name) throw new UsageError(`${action} needs a queue name`);
  if (!NAMED.includes(action) && name) throw new UsageError(`${action} takes no queue name (got "${name}")`);
  const promise = promiseFlags(action, v);
  const group = positionals[2];
  if ((action === 'group-limit') !== (group !== undefined))
    throw new UsageError(action === 'group-limit' ? 'group-limit needs a group' : `${action} takes no group`);
  const limitFlagsGiven = [
    v.concurrency,
    v.rate,
    v['group-concurrency'],
    v['group-rate'],
    v.fair,
    v['no-fair'],
    v['fair-window'],
  ];
  if (action !== 'limit' && action !== 'group-limit' && limitFlagsGiven.some((f) => f !== undefined))
    throw new UsageError(
      `--concurrency, --rate, --group-concurrency, --group-rate and --fair go with limit, not ${action}`,
    );
  const limits = action === 'limit' ? limitFlags(v) : null;
  const groupConcurrency = action === 'group-limit' ? groupLimitFlag(v) : undefined;
  const sluice = await openSluice(v, { poolMax: 2 });
  try {
    const queue = name as string;
    switch (action) {
      case 'paused': {
        const paused = await sluice.queues.paused({ after: v.after });
        return print({ paused, next: nextAfter(paused) });
      }
      case 'promises': {
        const promises = await sluice.queues.promises({ after: v.after });
        return print({ promises, next: nextAfter(promises) });
      }
      case 'limits':
        return print({ limits: await sluice.queues.limits() });
      case 'limit':
        await sluice.queues.setLimits(queue, limits as QueueLimits);
        return print({ queue, limits });
      case 'groups': {
        const max = intFlag('max', v.max, 1) ?? 100;
        return print({ queue, groups: await sluice.queues.groups(queue, { after: v.after, limit: max }) });
      }
      case 'group-limit': {
        const concurrency = groupConcurrency as number | null;
        const released = await sluice.queues.setGroupLimits(queue, group as string, { concurrency });
        return print({ queue, group, concurrency, released });
      }
      case 'promise':
        await sluice.queues.setPromise(queue, promise);
        return print({ queue, promise });
      case 'pause':
      case 'resume':
        await (action === 'pause' ? sluice.queues.pause(queue) : sluice.queues.resume(queue));
        return print({ queue, paused: action === 'pause' });
    }
  } finally {
    await sluice.close();
  }
}

/** `group-limit`'s one flag: --concurrency N, or none. */
function groupLimitFlag(v: { concurrency?: string; rate?: string }): number | null {
  if (v.concurrency === undefined || v.rate !== undefined)
    throw new UsageError('group-limit takes --concurrency N (or none), and nothing else');
  return v.concurrency === 'none' ? null : (intFlag('concurrency', v.concurrency, 1) as number);
}

/** The promise the flags describe (null: --none), refused on any other action. */
function promiseFlags(
  action: (typeof ACTIONS)[number],
  v: { 'start-within-ms'?: string; 'max-ready'?: string; none?: boolean },
): { startWithinMs: number | null; maxReady: number | null } | null {
  const startWithinMs = intFlag('start-within-ms', v['start-within-ms'], 1) ?? null;
  const maxReady = intFlag('max-ready', v['max-ready'], 1) ?? null;
  const given = startWithinMs !== null || maxReady !== null;
  if (action !== 'promise') {
    if (given || v.none)
      throw new UsageError(`--start-within-ms, --max-ready and --none go with promise, not ${action}`);
    return null;
  }
  if (v.none && given) throw new UsageError('--none withdraws the promise: give it alone');
  if (!v.none && !given) throw new UsageError('promise needs --start-within-ms, --max-ready, or --none');
  return v.none ? null : { startWithinMs, maxReady };
}

function print(value: unknown): number {
  process.stdout.write(`${terminalJson(value)}\n`);
  return 0;
}

/** A page's last queue when the page is full (1,000 rows): where the next page starts; else null. */
function nextAfter(page: readonly { queue: string }[]): string | null {
  return page.length >= 1_000 ? (page[page.length - 1]?.queue ?? null) : null;
}
