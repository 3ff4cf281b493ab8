/**
 * `npm run bench -- pickup [--concurrency 500] [--samples 60]`: section (d)'s pickup-latency probe
 * alone, for sluice alone (peers/sluicePeer.ts, harness peers/peer.ts): one idle worker process at
 * that concurrency, jobs enqueued one by one 100–300 ms apart from this process (so each is a
 * ring over the doorbell), from the enqueue call to the handler's start. A minute, not the hour
 * of `npm run bench`: for a change to the wake-up path, before and after. BENCH_DATABASE names
 * the database (default sluice_bench) so that it can run beside another bench.
 */
import { parseArgs } from 'node:util';
import { SLUICE_SETTINGS, sluicePeer } from './peers/sluicePeer.ts';
import { percentiles } from './peers.ts';
import { progress } from './progress.ts';

const { values } = parseArgs({
  options: { concurrency: { type: 'string', default: '500' }, samples: { type: 'string', default: '60' } },
});
const concurrency = Number(values.concurrency);
const samples = Number(values.samples);
const setting = SLUICE_SETTINGS.find((s) => s.concurrency === concurrency) ?? {
  ...(SLUICE_SETTINGS[0] as (typeof SLUICE_SETTINGS)[number]),
  concurrency,
  describe: `sluice.worker({ concurrency: ${concurrency} }), other options default`,
};
const peer = sluicePeer([setting]);
if (!(await peer.available())) throw new Error(`${peer.server} did not answer`);
progress(`pickup: ${peer.name} on ${await peer.setup()}`);
try {
  await peer.clear();
  const l = percentiles(await peer.pickupLatency(setting, samples, false));
  const ms = (v: number) => v.toFixed(1);
  process.stdout.write(
    `pickup latency c${concurrency}, ${l.samples} jobs: p50 ${ms(l.p50)} p90 ${ms(l.p90)} p99 ${ms(l.p99)} ms\n`,
  );
} finally {
  await peer.teardown();
}
