import { openSluice } from './openSluice.ts';
import { COMMON_HELP, choice, help, parse } from './parse.ts';
import { UsageError } from './UsageError.ts';

export const QUEUE_HELP = `sluice queue: pause or resume claiming from a queue

  sluice queue pause NAME     no worker claims from NAME; running jobs finish
  sluice queue resume NAME
  sluice queue paused         list paused queues
${COMMON_HELP}`;

const ACTIONS = ['pause', 'resume', 'paused'] as const;

export async function queueCommand(argv: string[]): Promise<number> {
  const { values: v, positionals } = parse(argv, {}, 2);
  if (v.help) return help(QUEUE_HELP);
  const action = choice('action', positionals[0], ACTIONS);
  const name = positionals[1];
  if (action !== 'paused' && !name) throw new UsageError(`${action} needs a queue name`);
  if (action === 'paused' && name) throw new UsageError(`paused takes no queue name (got "${name}")`);
  const sluice = await openSluice(v, { poolMax: 2 });
  try {
    if (action === 'paused') {
      process.stdout.write(`${JSON.stringify({ paused: await sluice.queues.paused() })}\n`);
      return 0;
    }
    await (action === 'pause' ? sluice.queues.pause(name as string) : sluice.queues.resume(name as string));
    process.stdout.write(`${JSON.stringify({ queue: name, paused: action === 'pause' })}\n`);
    return 0;
  } finally {
    await sluice.close();
  }
}
