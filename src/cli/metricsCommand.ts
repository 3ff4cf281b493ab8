import type { AddressInfo } from 'node:net';
import { SluiceMetrics } from '../metrics/metricsServer.ts';
import { createSluice } from '../Sluice.ts';
import { stopOnSignals } from '../shutdown.ts';
import { COMMON_HELP, intFlag, parse, help } from './parse.ts';

export const METRICS_HELP = `sluice metrics: serve Prometheus metrics on GET /metrics until SIGINT/SIGTERM

  --port N     port to listen on (default: 9464; 0 picks a free one)
  --host H     address to bind (default: 0.0.0.0)
${COMMON_HELP}`;

export async function metricsCommand(argv: string[]): Promise<number> {
  const { values: v } = parse(argv, { port: { type: 'string' }, host: { type: 'string' } });
  if (v.help) return help(METRICS_HELP);
  const sluice = createSluice({ url: v.url, tablePrefix: v.prefix, poolMax: 3 });
  try {
    const server = await new SluiceMetrics(sluice).listen(intFlag('port', v.port) ?? 9464, v.host);
    const { port } = server.address() as AddressInfo;
    sluice.logger.info({ event: 'metrics:listening', port }, `metrics on http://${v.host ?? '0.0.0.0'}:${port}/metrics`);
    process.send?.('ready');
    await stopOnSignals({ stop: () => new Promise<void>((resolve) => server.close(() => resolve())) }, sluice.logger);
    return 0;
  } finally {
    await sluice.close();
  }
}
