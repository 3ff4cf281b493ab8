import { describe, expect, it } from 'vitest';
import { Cancellation } from '../../src/worker/Cancellation.ts';

describe('Cancellation', () => {
  it('a signal read after the abort is born aborted, with the first reason', () => {
    const cancel = new Cancellation();
    const first = new Error('claim lost');
    cancel.abort(first);
    cancel.abort(new Error('second'));
    expect(cancel.aborted).toBe(true);
    expect(cancel.signal.aborted).toBe(true);
    expect(cancel.signal.reason).toBe(first);
  });

  it('a signal read before the abort fires its abort event once, and is the same signal every time', () => {
    const cancel = new Cancellation();
    const signal = cancel.signal;
    let fired = 0;
    signal.addEventListener('abort', () => fired++);
    expect(signal.aborted).toBe(false);
    const reason = new Error('timed out');
    cancel.abort(reason);
    cancel.abort(new Error('again'));
    expect(fired).toBe(1);
    expect(cancel.signal).toBe(signal);
    expect(signal.reason).toBe(reason);
  });
});
