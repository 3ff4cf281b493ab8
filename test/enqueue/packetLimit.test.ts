import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startThrowawayServer, type ThrowawayServer } from '../../src/demo/server/throwawayServer.ts';
import { createSluice, JobValidationError, type Sluice } from '../../src/index.ts';
import { randomText } from '../helpers/randomText.ts';
import { testLogger } from '../helpers/testDatabase.ts';

/**
 * A server with max_allowed_packet 1 MiB (a private one: it is a server setting), and an install
 * whose maxPayloadBytes (2 MiB) lets through a payload of 1.2 MB of text that does not pack
 * (src/model/storedPayload.ts): escaped for the server it is a statement the server refuses by
 * closing the connection.
 */
let server: ThrowawayServer;
let sluice: Sluice;

beforeAll(async () => {
  server = await startThrowawayServer({ extraArgs: ['--max-allowed-packet=1M'] });
  sluice = createSluice({ url: server.url, logger: testLogger, maxPayloadBytes: 2 * 1024 * 1024 });
  await sluice.migrate();
});

afterAll(async () => {
  await sluice?.close();
  await server?.stop();
});

describe('a job whose escaped row exceeds max_allowed_packet', () => {
  it('is a JobValidationError naming it, before anything is sent; the batch writes nothing and the pool stays sound', async () => {
    const text = randomText(1_200_000);
    const error = await sluice
      .enqueueBatch([{ name: 'small' }, { name: 'big', payload: { text } }, { name: 'small' }])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JobValidationError);
    expect(error).toMatchObject({ index: 1, field: 'payload' });
    expect((error as Error).message).toMatch(/bytes once escaped for the server, over its max_allowed_packet/);
    const [rows] = (await sluice.knex.raw('SELECT COUNT(*) AS n FROM sluice_jobs')) as [{ n: number }[]];
    expect(Number(rows[0]?.n)).toBe(0);
    await expect(sluice.enqueue({ name: 'big', payload: { text } })).rejects.toMatchObject({
      index: 0,
      field: 'payload',
    });
    // The next statements work: nothing was sent that would have closed a connection.
    for (let i = 0; i < 5; i++) await sluice.enqueue({ name: 'after', payload: { i } });
    expect((await sluice.queues.depth())[0]).toMatchObject({ ready: { count: 5, exact: true } });
  });
});
