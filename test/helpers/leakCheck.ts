import { afterEach, expect } from 'vitest';
import { Worker } from '../../src/worker/Worker.ts';

/**
 * Fails a test that leaves a Worker running: every started worker must be stopped by the test
 * that started it (graphile's afterEach check).
 */
const started = new Set<Worker>();
const originalStart = Worker.prototype.start;
Worker.prototype.start = async function start(this: Worker) {
  started.add(this);
  return originalStart.call(this);
};

afterEach(async () => {
  const running = [...started].filter((w) => w.state === 'running' || w.state === 'stopping');
  started.clear();
  await Promise.all(running.map((w) => w.forceStop()));
  expect(
    running.map((w) => w.id),
    'workers left running by this test',
  ).toEqual([]);
});
