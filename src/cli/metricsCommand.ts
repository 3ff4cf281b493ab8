import type { AddressInfo } from 'node:net';
import { stopOnSignals } from '../shutdown.ts';
import { openSluice } from './openSluice.ts';
import { COMMON_HELP, help, parse, portFlag } from './parse.ts';

const DEFAULT_PORT = 9464;

export const METRICS_HELP = `sluice metrics: serve Prometheus metrics on GET /metrics until SIGINT/SIGTERM

  --port N     port to listen on, 0–65535 (default: ${DEFAULT_PORT}; 0 picks a free one)
  --host H     address to bind (default: 127.0.0.1: anything that listens binds loopback unless told otherwise)
${COMMON_HELP}`;

export async function metricsCommand(argv: string[]): Promise<number> {
  const { values: v } = parse(argv, { port: { type: 'string' }, host: { type: 'string' } });
  if (v.help) return help(METRICS_HELP);
  const port = portFlag('port', v.port) ?? DEFAULT_PORT;
  const sluice = await openSluice(v, { poolMax: 3 });
  try {
    const { SluiceMetrics } = await import('../metrics/SluiceMetrics.ts');
    const server = await new SluiceMetrics(sluice).listen(port, v.host ?? '127.0.0.1');
    const { port: bound } = server.address() as AddressInfo;
    sluice.logger.info(
      { event: 'metrics:listening', port: bound },
      `metrics on http://${v.host ?? '127.0.0.1'}:${bound}/metrics`,
    );
    process.send?.('ready');
    await stopOnSignals({ stop: () => new Promise<void>((resolve) => server.close(() => resolve())) }, sluice.logger);
    return 0;
  } finally {
    await sluice.close();
  }
}
