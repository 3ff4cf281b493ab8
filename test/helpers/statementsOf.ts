import type { Sluice } from '../../src/index.ts';

/** What `fn` returns and how many statements it sent through `sluice`'s pool meanwhile. */
export async function statementsOf<T>(sluice: Sluice, fn: () => Promise<T>): Promise<{ n: number; value: T }> {
  let n = 0;
  const count = () => {
    n++;
  };
  sluice.knex.on('query', count);
  try {
    return { value: await fn(), n };
  } finally {
    sluice.knex.off('query', count);
  }
}
