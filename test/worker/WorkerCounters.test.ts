import { describe, expect, it } from 'vitest';
import {
  ATTEMPT_DURATION_BUCKETS_S,
  decodeWorkerMetrics,
  OTHER_NAME,
  START_LATENCY_BUCKETS_S,
} from '../../src/worker/metricsSnapshot.ts';
import { WorkerCounters } from '../../src/worker/WorkerCounters.ts';

/**
 * A worker's metrics in memory, and as its heartbeat carries them: counts per queue and job name,
 * names bounded per worker, fixed buckets, and what the bytes come to per send.
 */
describe('WorkerCounters', () => {
  it('counts claims, outcomes and durations per queue and name; the snapshot decodes to the same numbers', () => {
    const c = new WorkerCounters(50);
    c.claimed('mail', [
      { name: 'send', waitedMs: 4 },
      { name: 'send', waitedMs: 700 },
      { name: 'bounce', waitedMs: null },
    ]);
    c.claimed('mail', []);
    c.outcome('mail', 'send', 'completed', 30);
    c.outcome('mail', 'send', 'failed', 2_000);
    c.outcome('mail', 'send', 'retried');
    c.outcome('mail', 'bounce', 'failed', 1);
    c.outcome('mail', 'bounce', 'dead');
    c.outcome('mail', 'send', 'cancelled', 100_000);
    const decoded = decodeWorkerMetrics(c.snapshot(12.4));
    expect(decoded?.eventLoopDelayMaxMs).toBe(12);
    expect(decoded?.residentMemoryBytes).toBeGreaterThan(0);
    const mail = decoded?.queues.mail;
    expect(mail).toMatchObject({ claims: 2, emptyClaims: 1 });
    expect(mail?.startLatency.count).toBe(2);
    expect(mail?.startLatency.sumSeconds).toBeCloseTo(0.704);
    expect(mail?.startLatency.buckets).toHaveLength(START_LATENCY_BUCKETS_S.length + 1);
    // 4 ms ≤ 0.01 s (first bucket); 700 ms in (0.5, 1].
    expect(mail?.startLatency.buckets[0]).toBe(1);
    expect(mail?.startLatency.buckets[START_LATENCY_BUCKETS_S.indexOf(1)]).toBe(1);
    expect(mail?.names.send).toMatchObject({
      claimed: 2,
      completed: 1,
      failed: 1,
      retried: 1,
      dead: 0,
      cancelled: 1,
    });
    expect(mail?.names.bounce).toMatchObject({ claimed: 1, failed: 1, dead: 1, completed: 0 });
    const send = mail?.names.send?.attemptDuration;
    expect(send?.count).toBe(3);
    expect(send?.sumSeconds).toBeCloseTo(102.03);
    // 30 ms in (0.025, 0.05]; 2 s in (1, 2.5]; 100 s in (60, 300].
    expect(send?.buckets[ATTEMPT_DURATION_BUCKETS_S.indexOf(0.05)]).toBe(1);
    expect(send?.buckets[ATTEMPT_DURATION_BUCKETS_S.indexOf(2.5)]).toBe(1);
    expect(send?.buckets[ATTEMPT_DURATION_BUCKETS_S.indexOf(300)]).toBe(1);
    // Past the last bound: the +Inf bucket.
    c.outcome('mail', 'send', 'completed', 3_600_000);
    const late = decodeWorkerMetrics(c.snapshot(0))?.queues.mail?.names.send?.attemptDuration;
    expect(late?.buckets.at(-1)).toBe(1);
  });

  it('bounds the names per worker: past maxNames, new names count as one "(other)" per queue', () => {
    const c = new WorkerCounters(3);
    for (const name of ['a', 'b', 'c', 'd', 'e']) c.outcome('q1', name, 'completed', 1);
    c.outcome('q2', 'a', 'completed', 1);
    c.outcome('q2', 'z', 'completed', 1);
    c.outcome('q1', 'a', 'completed', 1);
    const decoded = decodeWorkerMetrics(c.snapshot(0));
    expect(Object.keys(decoded?.queues.q1?.names ?? {}).sort()).toEqual([OTHER_NAME, 'a', 'b', 'c']);
    expect(decoded?.queues.q1?.names.a?.completed).toBe(2);
    expect(decoded?.queues.q1?.names[OTHER_NAME]?.completed).toBe(2);
    // The bound is per worker: q2's names are past it too.
    expect(Object.keys(decoded?.queues.q2?.names ?? {}).sort()).toEqual([OTHER_NAME]);
    expect(decoded?.queues.q2?.names[OTHER_NAME]?.completed).toBe(2);
  });

  it('reads anything else as null: no row, another version, malformed text', () => {
    expect(decodeWorkerMetrics(null)).toBeNull();
    expect(decodeWorkerMetrics('')).toBeNull();
    expect(decodeWorkerMetrics('{"v":2,"p":[1,2],"q":{}}')).toBeNull();
    expect(decodeWorkerMetrics('{"v":1,"p":[1,2],"q":{"x":7}}')).toBeNull();
    expect(decodeWorkerMetrics('not json')).toBeNull();
  });

  it('the bytes one send adds to a heartbeat: a few hundred for a busy queue, bounded by the names', () => {
    const busy = (queues: number, names: number, maxNames = 50) => {
      const c = new WorkerCounters(maxNames);
      for (let q = 0; q < queues; q++) {
        const queue = `queue-${q}`;
        for (let i = 0; i < 10_000; i++) {
          const name = `job.name-${i % names}`;
          c.claimed(queue, [{ name, waitedMs: (i * 37) % 90_000 }]);
          c.outcome(queue, name, i % 10 === 0 ? 'failed' : 'completed', (i * 53) % 120_000);
          if (i % 10 === 0) c.outcome(queue, name, i % 30 === 0 ? 'dead' : 'retried');
        }
      }
      return Buffer.byteLength(c.snapshot(3));
    };
    const one = busy(1, 1);
    const five = busy(1, 5);
    const wide = busy(4, 20);
    const unbounded = busy(4, 500);
    process.stderr.write(
      `[operations] metrics bytes per heartbeat send: 1 queue × 1 name ${one}, 1 × 5 ${five}, 4 × 20 ${wide}, 4 × 500 names (bounded to 50) ${unbounded}\n`,
    );
    expect(one).toBeLessThan(400);
    expect(five).toBeLessThan(1_200);
    // 500 names per queue cost what 50 do: the rest is one "(other)" per queue.
    expect(unbounded).toBeLessThan(6_000);
  });
});
