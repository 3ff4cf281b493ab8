import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defineJob } from '../../src/index.ts';
import { activeTracer } from '../../src/tracing/activeTracer.ts';
import { countRows } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { recordEvents, withWorker } from '../helpers/workerHarness.ts';

/**
 * With no OpenTelemetry SDK registered (this file registers none), tracing costs nothing: no span
 * is started, and no statement of any sluice process names job_traces — counted from mysql2's own
 * diagnostics channel, so every pool of the install is seen.
 */
const db = useTestDatabase('tracing_off');
const sent: string[] = [];
const onStatement = (message: unknown) => sent.push(String((message as { query?: unknown }).query ?? ''));

beforeEach(() => {
  sent.length = 0;
  subscribe('tracing:mysql2:query:start', onStatement);
  subscribe('tracing:mysql2:execute:start', onStatement);
});

afterEach(() => {
  unsubscribe('tracing:mysql2:query:start', onStatement);
  unsubscribe('tracing:mysql2:execute:start', onStatement);
});

describe('without an SDK', () => {
  it('has no tracer, and neither an enqueue nor a worker reads or writes a trace context', async () => {
    expect(activeTracer()).toBeUndefined();
    const sluice = db.open();
    const events = recordEvents(sluice);
    await sluice.enqueue({ name: 'noop', queue: 'plain' });
    await sluice.enqueue({ name: 'noop', queue: 'plain', idempotencyKey: 'k' });
    await sluice.enqueueBatch([
      { name: 'noop', queue: 'plain' },
      { name: 'noop', queue: 'plain' },
    ]);
    const noop = defineJob({ name: 'noop', handle: async () => undefined });
    await withWorker(sluice, [noop], { queues: ['plain'] }, async () => {
      await waitFor(() => events['job:completed'].length === 4, { what: 'the four jobs' });
    });
    expect(sent.length).toBeGreaterThan(10);
    expect(sent.filter((sql) => sql.includes('job_traces'))).toEqual([]);
    expect(await countRows(db, 'sluice_job_traces')).toBe(0);
  });
});
