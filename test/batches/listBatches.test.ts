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
