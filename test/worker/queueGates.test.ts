import { describe, expect, it } from 'vitest';
import { MAX_GATES, QueueGates } from '../../src/worker/QueueGates.ts';
import { operationsOf } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * What a worker keeps of its queues' limits and pauses (src/worker/QueueGates.ts) stays bounded
 * however many queues it meets: a worker on '*' may claim from ever new queues.
 */
const db = useTestDatabase('queue_gates');

const blockedFor = (ms: number) => ({ rows: [], limited: true, blocked: 'paused' as const, waitMs: ms });
const unlimited = { rows: [], limited: false, blocked: null, waitMs: null };

describe('QueueGates', () => {
  it(`keeps at most ${MAX_GATES} queues' gates after 50,000 distinct queues, and keeps the ones that hold a block`, () => {
    const { exec, tables } = operationsOf(db);
    const gates = new QueueGates(exec, tables, 0);
    const held = Array.from({ length: 10 }, (_, n) => `held-${n}`);
    for (const queue of held) gates.limitedClaim(queue, blockedFor(60_000));
    for (let n = 0; n < 50_000; n++) {
      // A limited claim that found the limit gone: the gate holds nothing worth keeping.
      gates.limitedClaim(`tenant-${n}`, unlimited);
      if (n % 1_000 === 0) expect(gates.size).toBeLessThanOrEqual(MAX_GATES);
    }
    expect(gates.size).toBeLessThanOrEqual(MAX_GATES);
    for (const queue of held) {
      expect(gates.limited(queue)).toBe(true);
      expect(gates.blockedForMs(queue)).toBeGreaterThan(0);
    }
  });
});
