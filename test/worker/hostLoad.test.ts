import { describe, expect, it } from 'vitest';
import { freeMemoryFraction, readHostLoad } from '../../src/worker/hostLoad.ts';

const GB = 1024 ** 3;

describe('free memory, as a worker judges it', () => {
  it('in a container, is the free part of the container’s limit, not of the host', () => {
    // 512 MB container, 100 MB of it free, on a 64 GB host.
    expect(
      freeMemoryFraction({ available: 100 * 1024 ** 2, constrained: 512 * 1024 ** 2, total: 64 * GB }),
    ).toBeCloseTo(100 / 512);
  });

  it('without a limit (none, or one larger than the host), is the free part of the host', () => {
    expect(freeMemoryFraction({ available: 8 * GB, constrained: 0, total: 32 * GB })).toBe(0.25);
    expect(freeMemoryFraction({ available: 8 * GB, constrained: 2 ** 64, total: 32 * GB })).toBe(0.25);
  });

  it('this machine gives a reading within [0, 1]', async () => {
    const reading = await readHostLoad();
    expect(reading.freeMem).toBeGreaterThan(0);
    expect(reading.freeMem).toBeLessThanOrEqual(1);
    expect(reading.cpu).toBeGreaterThanOrEqual(0);
  });
});
