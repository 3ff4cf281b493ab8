import { describe, expect, it } from 'vitest';
import { JobValidationError } from '../../src/errors.ts';
import type { JobSpec } from '../../src/model/job.ts';
import { validateJob } from '../../src/model/validateJob.ts';

const LIMITS = { maxPayloadBytes: 1_000 };

function reject(spec: unknown, limits = LIMITS): JobValidationError {
  try {
    validateJob(spec as JobSpec, 7, limits);
  } catch (error) {
    expect(error).toBeInstanceOf(JobValidationError);
    return error as JobValidationError;
  }
  throw new Error(`validateJob accepted ${JSON.stringify(spec)}`);
}

describe('validateJob', () => {
  it('fills defaults for a minimal job', () => {
    expect(validateJob({ name: 'send-mail' }, 0, LIMITS)).toEqual({
      queue: 'default',
      name: 'send-mail',
      payload: '{}',
      storedPayload: '{}',
      priority: 0,
      runAt: null,
      delayMs: 0,
      maxRetries: null,
      idempotencyKey: null,
      backoff: null,
      graph: null,
      group: null,
      flow: { group: null, groupRate: null, debounce: null, throttle: null },
    });
  });

  it('keeps every field of a full job', () => {
    const runAt = new Date('2030-01-02T03:04:05.678Z');
    expect(
      validateJob(
        {
          name: 'a.b:c-d_e',
          queue: 'mail.high',
          payload: { to: ['x'], n: 1 },
          priority: -32768,
          runAt,
          maxRetries: 0,
          idempotencyKey: 'k'.repeat(191),
          backoff: { type: 'exponential', delayMs: 500, maxDelayMs: 60_000, jitter: 0 },
        },
        0,
        LIMITS,
      ),
    ).toEqual({
      queue: 'mail.high',
      name: 'a.b:c-d_e',
      payload: '{"to":["x"],"n":1}',
      storedPayload: '{"to":["x"],"n":1}',
      priority: -32768,
      runAt,
      delayMs: 0,
      maxRetries: 0,
      idempotencyKey: 'k'.repeat(191),
      backoff: '{"type":"exponential","delayMs":500,"maxDelayMs":60000,"jitter":0}',
      graph: null,
      group: null,
      flow: { group: null, groupRate: null, debounce: null, throttle: null },
    });
  });

  it('accepts null, arrays, strings and numbers as payloads', () => {
    expect(validateJob({ name: 'j', payload: null }, 0, LIMITS).payload).toBe('null');
    expect(validateJob({ name: 'j', payload: [1, 2] }, 0, LIMITS).payload).toBe('[1,2]');
    expect(validateJob({ name: 'j', payload: 'text' }, 0, LIMITS).payload).toBe('"text"');
    expect(validateJob({ name: 'j', payload: 0 }, 0, LIMITS).payload).toBe('0');
  });

  it('rounds delayMs to whole milliseconds', () => {
    expect(validateJob({ name: 'j', delayMs: 1.6 }, 0, LIMITS).delayMs).toBe(2);
  });

  it('accepts the boundaries of each range', () => {
    expect(() =>
      validateJob({ name: 'n'.repeat(128), queue: 'q'.repeat(64), priority: 32767, maxRetries: 1_000_000 }, 0, LIMITS),
    ).not.toThrow();
    expect(() => validateJob({ name: 'j', payload: 'x'.repeat(998) }, 0, LIMITS)).not.toThrow(); // 1,000 bytes with quotes
  });

  it.each([
    ['not an object', 'job', 'job', 'must be an object'],
    ['an array', [{ name: 'j' }], 'job', 'must be an object'],
    ['null', null, 'job', 'must be an object'],
    ['no name', { payload: 1 }, 'name', 'must be 1–128 characters'],
    ['an empty name', { name: '' }, 'name', 'must be 1–128 characters'],
    ['a name of 129 characters', { name: 'n'.repeat(129) }, 'name', 'must be 1–128 characters'],
    ['a name with a slash', { name: 'a/b' }, 'name', 'must be 1–128 characters'],
    ['a name that is a number', { name: 5 }, 'name', '(got number 5)'],
    ['a queue of 65 characters', { name: 'j', queue: 'q'.repeat(65) }, 'queue', 'must be 1–64 characters'],
    ['an empty queue', { name: 'j', queue: '' }, 'queue', 'must be 1–64 characters'],
    ['a queue with a space', { name: 'j', queue: 'a b' }, 'queue', 'must be 1–64 characters'],
    ['a BigInt payload', { name: 'j', payload: { n: 1n } }, 'payload.n', 'is a BigInt, which JSON cannot store'],
    [
      'a circular payload',
      (() => {
        const p: Record<string, unknown> = {};
        p.self = p;
        return { name: 'j', payload: p };
      })(),
      'payload.self',
      'is an object that contains it (a cycle)',
    ],
    ['a function payload', { name: 'j', payload: () => 1 }, 'payload', 'is not JSON-serialisable'],
    ['a symbol payload', { name: 'j', payload: Symbol('s') }, 'payload', 'is not JSON-serialisable'],
    [
      'a NaN in a payload',
      { name: 'j', payload: { a: { b: Number.NaN } } },
      'payload.a.b',
      'is NaN, which JSON stores as null',
    ],
    [
      'a payload one byte over the limit',
      { name: 'j', payload: 'x'.repeat(999) },
      'payload',
      'is 1001 bytes as JSON, over the limit of 1000',
    ],
    [
      'a payload over the limit in bytes, not characters',
      { name: 'j', payload: 'é'.repeat(500) },
      'payload',
      'is 1002 bytes as JSON',
    ],
    ['a priority of 32768', { name: 'j', priority: 32_768 }, 'priority', 'must be an integer in [-32768, 32767]'],
    ['a priority of -32769', { name: 'j', priority: -32_769 }, 'priority', 'must be an integer in [-32768, 32767]'],
    ['a fractional priority', { name: 'j', priority: 0.5 }, 'priority', 'must be an integer'],
    ['a string priority', { name: 'j', priority: '1' }, 'priority', 'must be an integer'],
    ['runAt as a number', { name: 'j', runAt: Date.now() }, 'runAt', 'must be a valid Date'],
    ['runAt as an invalid Date', { name: 'j', runAt: new Date(Number.NaN) }, 'runAt', 'must be a valid Date'],
    ['runAt before 1970-01-02', { name: 'j', runAt: new Date('1970-01-01T12:00:00Z') }, 'runAt', 'must lie between'],
    ['runAt in year 9999', { name: 'j', runAt: new Date('9999-06-01T00:00:00Z') }, 'runAt', 'must lie between'],
    [
      'runAt together with delayMs',
      { name: 'j', runAt: new Date(), delayMs: 5 },
      'runAt',
      'and delayMs cannot both be set',
    ],
    ['a negative delayMs', { name: 'j', delayMs: -1 }, 'delayMs', 'must be a number of milliseconds'],
    [
      'an infinite delayMs',
      { name: 'j', delayMs: Number.POSITIVE_INFINITY },
      'delayMs',
      'must be a number of milliseconds',
    ],
    ['a NaN delayMs', { name: 'j', delayMs: Number.NaN }, 'delayMs', 'must be a number of milliseconds'],
    ['a string delayMs', { name: 'j', delayMs: '10' }, 'delayMs', 'must be a number of milliseconds'],
    [
      'a delayMs over ten years',
      { name: 'j', delayMs: 11 * 365 * 24 * 3600 * 1000 },
      'delayMs',
      'must be a number of milliseconds',
    ],
    ['a negative maxRetries', { name: 'j', maxRetries: -1 }, 'maxRetries', 'must be an integer in [0, 1000000]'],
    ['a fractional maxRetries', { name: 'j', maxRetries: 1.5 }, 'maxRetries', 'must be an integer'],
    ['a huge maxRetries', { name: 'j', maxRetries: 1_000_001 }, 'maxRetries', 'must be an integer'],
    [
      'an empty idempotencyKey',
      { name: 'j', idempotencyKey: '' },
      'idempotencyKey',
      'must be a string of 1–191 characters',
    ],
    [
      'an idempotencyKey of 192 characters',
      { name: 'j', idempotencyKey: 'k'.repeat(192) },
      'idempotencyKey',
      'must be a string of 1–191',
    ],
    ['a numeric idempotencyKey', { name: 'j', idempotencyKey: 42 }, 'idempotencyKey', 'must be a string'],
    [
      'a backoff function (cannot be stored)',
      { name: 'j', backoff: () => 5 },
      'backoff',
      'a function cannot be stored with a job',
    ],
    [
      'a backoff of an unknown type',
      { name: 'j', backoff: { type: 'linear', delayMs: 5 } },
      'backoff',
      'type must be "fixed" or "exponential"',
    ],
    [
      'a backoff with a negative delay',
      { name: 'j', backoff: { type: 'fixed', delayMs: -5 } },
      'backoff',
      'delayMs must be a number',
    ],
    [
      'a backoff with an unknown field',
      { name: 'j', backoff: { type: 'fixed', delayMs: 5, factor: 2 } },
      'backoff',
      'unknown field "factor"',
    ],
    ['an unknown field', { name: 'j', retries: 3 }, 'retries', 'is not a job field'],
    ['an unknown field set to undefined', { name: 'j', runat: undefined }, 'runat', 'is not a job field'],
  ])('rejects %s, naming the index and field', (_what, spec, field, reason) => {
    const error = reject(spec);
    expect(error.index).toBe(7);
    expect(error.field).toBe(field);
    expect(error.code).toBe('SLUICE_JOB_INVALID');
    expect(error.message).toMatch(new RegExp(`^job 7: ${field} `));
    expect(error.message).toContain(reason);
  });
});
