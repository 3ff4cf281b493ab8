import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import { afterAll, describe, expect, it } from 'vitest';
import { createSluice, defineJob, type Sluice } from '../../src/index.ts';
import { testLogger, useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { recordEvents, withWorker } from '../helpers/workerHarness.ts';

/**
 * README "Security": everything but migrations runs with SELECT, INSERT, UPDATE and DELETE on
 * sluice's tables — enqueue, workers, the maintenance process, stats, dead-job tools. Checked with
 * a user that has exactly those privileges.
 */
const db = useTestDatabase('least_privilege');
const user = `sluice_rw_${randomBytes(3).toString('hex')}`;
const password = randomBytes(9).toString('hex');
let admin: mysql.Connection | undefined;
let sluice: Sluice | undefined;

afterAll(async () => {
  await sluice?.close();
  await admin?.query(`DROP USER IF EXISTS '${user}'@'%'`);
  await admin?.end();
});

describe('a database user with SELECT, INSERT, UPDATE and DELETE only', () => {
  it('enqueues, runs, maintains and inspects; only applying migrations needs more', async () => {
    admin = await mysql.createConnection({ uri: db.url });
    await admin.query(`CREATE USER '${user}'@'%' IDENTIFIED BY '${password}'`);
    await admin.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON \`${db.name}\`.* TO '${user}'@'%'`);
    const url = new URL(db.url);
    url.username = user;
    url.password = password;
    sluice = createSluice({ url: url.toString(), logger: testLogger });
    const events = recordEvents(sluice);

    await sluice.enqueue({ name: 'ok', idempotencyKey: 'k1' });
    const { batchId } = await sluice.enqueueBatch([{ name: 'ok' }, { name: 'bad' }], {
      onComplete: { name: 'ok', payload: {} },
    });
    const ok = defineJob({ name: 'ok', handle() {} });
    const bad = defineJob({
      name: 'bad',
      maxRetries: 0,
      handle() {
        throw new Error('no');
      },
    });
    await withWorker(sluice, [ok, bad], {}, async () => {
      await waitFor(() => events['job:completed'].length === 2 && events['job:dead'].length === 1, {
        what: 'jobs finished',
      });
      const maintenance = sluice!.maintenance({ jitterMs: 0 });
      try {
        expect(await maintenance.runOnce()).toMatchObject({ leader: true, tasks: { finishBatches: { batches: 1 } } });
      } finally {
        await maintenance.stop();
      }
      await waitFor(() => events['job:completed'].length === 3, { what: 'the batch completion job ran' });
    });
    expect(await sluice.batches.get(batchId as number)).toMatchObject({ succeeded: 1, dead: 1 });
    await sluice.queues.pause('default');
    await sluice.queues.resume('default');
    expect(await sluice.queues.depth()).toEqual(expect.any(Array));
    expect(await sluice.deadJobs.list()).toHaveLength(1);
    expect(await sluice.deadJobs.redrive()).toEqual({ redriven: 1 });
    expect(events['worker:error']).toEqual([]);
    expect(events['maintenance:error']).toEqual([]);

    // The user really has no DDL: applying a migration would need it (checking for pending ones does not).
    await expect(sluice.knex.raw('CREATE TABLE x (id INT)')).rejects.toThrow(/denied/i);
    expect(await sluice.migrate()).toEqual({ applied: [] });
  });
});
