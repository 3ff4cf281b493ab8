import { describe, expect, it } from 'vitest';
import { listBatches } from '../../src/batches/listBatches.ts';
import { fromKnex } from '../../src/db/executor.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/** The dashboard's batches page: newest first, keyset pages by id, each batch with its counts, in one statement. */
const db = useTestDatabase('list_batches');

describe('listBatches', () => {
  it('pages batches newest first with their counts', async () => {
    const ids: number[] = [];
    for (let size = 1; size <= 5; size++) {
      ids.push(
        (await db.sluice.enqueueBatch(Array.from({ length: size }, () => ({ name: 'n', queue: 'b' }))))
          .batchId as number,
      );
    }
    const executor = fromKnex(db.sluice.knex, { readCommitted: true });
    const first = await listBatches(executor, db.sluice.tables, { limit: 2 });
    expect(first.batches.map((b) => [b.id, b.size, b.pending])).toEqual([
      [ids[4], 5, 5],
      [ids[3], 4, 4],
    ]);
    expect(first.next).toBe(ids[3]);
    // One statement for the page, whatever its size (before: one more per batch shown).
    let statements = 0;
    const count = () => {
      statements++;
    };
    db.sluice.knex.on('query', count);
    const rest = await listBatches(executor, db.sluice.tables, { before: first.next as number, limit: 10 }).finally(
      () => db.sluice.knex.off('query', count),
    );
    expect(statements).toBe(1);
    expect(rest.batches.map((b) => b.id)).toEqual([ids[2], ids[1], ids[0]]);
    expect(rest.next).toBeNull();
  });
});

describe('a batch name', () => {
  it('is stored with the batch, shown with its progress on the dashboard, and refused over 191 characters', async () => {
    const { batchId } = await db.sluice.enqueueBatch(
      Array.from({ length: 4 }, (_, i) => ({ name: 'n', queue: 'named', payload: { i } })),
      { name: 'nightly <import>' },
    );
    const plain = (await db.sluice.enqueueBatch([{ name: 'n', queue: 'named' }])).batchId as number;
    // Two of the four finished: one succeeded (gone), one dead.
    const [first, second] = await db.query<{ id: number }>(
      'SELECT id FROM sluice_jobs WHERE batch_id = ? ORDER BY id LIMIT 2',
      [batchId],
    );
    await db.query('DELETE FROM sluice_jobs WHERE id = ?', [first?.id]);
    await db.query(
      `INSERT INTO sluice_dead_jobs (id, queue, name, payload, priority, retry_times, max_retries, batch_id, last_error, created_at, failed_at)
       SELECT id, queue, name, payload, priority, 1, 0, batch_id, 'x', created_at, NOW(3) FROM sluice_jobs WHERE id = ?`,
      [second?.id],
    );
    await db.query('DELETE FROM sluice_jobs WHERE id = ?', [second?.id]);
    expect(await db.sluice.batches.get(batchId as number)).toMatchObject({
      name: 'nightly <import>',
      size: 4,
      dead: 1,
    });
    expect((await db.sluice.batches.get(plain))?.name).toBeNull();

    const handler = db.sluice.dashboard({ auth: false });
    const { createServer } = await import('node:http');
    const server = createServer(handler);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as { port: number };
      const list = await (await fetch(`http://127.0.0.1:${port}/batches`)).text();
      const row = new RegExp(`<tr data-batch-id="${batchId}"[\\s\\S]*?</tr>`).exec(list)?.[0] ?? '';
      expect(row).toContain('nightly &lt;import&gt;');
      expect(row).toContain('data-progress="50"');
      expect(row).toContain('(1 dead)');
      const page = await (await fetch(`http://127.0.0.1:${port}/batches/${batchId}`)).text();
      expect(page).toContain('<p class="batch-name">nightly &lt;import&gt;</p>');
    } finally {
      server.closeAllConnections();
      server.close();
    }
    await expect(db.sluice.enqueueBatch([{ name: 'n' }], { name: 'x'.repeat(192) })).rejects.toThrow(
      'must be a string of at most 191 characters',
    );
  });
});
