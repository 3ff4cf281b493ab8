import { createSluice } from '../Sluice.ts';
import { COMMON_HELP, parse, help } from './parse.ts';

export const QUEUE_HELP = `sluice queue: pause or resume claiming from a queue

  sluice queue pause NAME     no worker claims from NAME; running jobs finish
  sluice queue resume NAME
  sluice queue paused         list paused queues
${COMMON_HELP}`;

export async function queueCommand(argv: string[]): Promise<number> {
  const { values: v, positionals } = parse(argv, {});
  const [action, name] = positionals;
  if (v.help || !action) return help(QUEUE_HELP) + (action ? 0 : 2);
  const sluice = createSluice({ url: v.url, tablePrefix: v.prefix, poolMax: 2 });
  try {
    if (action === 'paused') {
      process.stdout.write(`${JSON.stringify({ paused: await sluice.pausedQueues() })}\n`);
      return 0;
    }
    if ((action === 'pause' || action === 'resume') && name) {
      await (action === 'pause' ? sluice.pauseQueue(name) : sluice.resumeQueue(name));
      process.stdout.write(`${JSON.stringify({ queue: name, paused: action === 'pause' })}\n`);
      return 0;
    }
    process.stderr.write(`sluice queue: expected pause NAME, resume NAME or paused\n`);
    return 2;
  } finally {
    await sluice.close();
  }
}
