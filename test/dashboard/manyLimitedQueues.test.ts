import { describe, expect, it } from 'vitest';
import { useDashboard } from '../helpers/dashboardServer.ts';
import { statementsOf } from '../helpers/statementsOf.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * 1,200 limited queues, 300 of them with a default for their groups: a queue's page reads its own
 * queue's limits by key, so a queue late in name order shows its cap and rate, and its form saved
 * as shown keeps them. Before, the page found them in `queues.limits()` (the first 1,000 limited
 * queues by name): it showed "No concurrency cap" with empty fields, and saving the form set cap
 * and rate to NULL; and it sent a statement per queue with group defaults (307 for this page).
 * Statements counted through knex's 'query' event, which sees every statement sluice sends.
 */
const db = useTestDatabase('many_limited_queues');
const dashboard = useDashboard(() => db.sluice, { auth: false });
const LIMITED = 1_200;
const LATE = 'q01150';

/** `LIMITED` limited queues q00001…, cap 5 and a rate; the first 300 with a per-group default. */
async function seed(): Promise<void> {
  await db.query(
    `INSERT INTO sluice_queues (queue, concurrency_cap, rate_limit, rate_interval_ms, group_concurrency, updated_at)
     SELECT CONCAT('q', LPAD(seq, 5, '0')), 5, 100, 60000, IF(seq <= 300, 2, NULL), NOW(3)
     FROM seq_1_to_${LIMITED}`,
  );
  await db.sluice.queues.setLimits(LATE, {
    concurrency: 7,
    rate: { limit: 40, intervalMs: 1_000 },
    groupConcurrency: 3,
  });
}

/** The limits form's fields as the page fills them in (its inputs' values; a checked box as "1"). */
function formFields(page: string): URLSearchParams {
  const form = /<form class="action limits-form"[\s\S]*?<\/form>/.exec(page)?.[0] ?? '';
  const fields = new URLSearchParams();
  for (const input of form.match(/<input [^>]*>/g) ?? []) {
    const name = /name="([^"]*)"/.exec(input)?.[1];
    const value = /value="([^"]*)"/.exec(input)?.[1] ?? '';
    if (name === undefined) continue;
    if (/type="checkbox"/.test(input) && !/ checked/.test(input)) continue;
    fields.set(name, value.replaceAll('&amp;', '&').replaceAll('&#x2F;', '/'));
  }
  return fields;
}

describe('a queue page among 1,200 limited queues', () => {
  it('shows its own limits, keeps them when its form is saved as shown, in a bounded number of statements', async () => {
    await seed();
    expect(await db.sluice.queues.limits()).toHaveLength(1_000);

    const res = await statementsOf(db.sluice, async () => {
      const r = await fetch(`${dashboard.url}/queues/${LATE}`);
      expect(r.status).toBe(200);
      return { text: await r.text(), cookie: (r.headers.get('set-cookie') ?? '').split(';')[0] as string };
    });
    const { text, cookie } = res.value;
    expect(text).toContain('Cap <b>7</b>');
    expect(text).toContain('Rate <b>40</b>');
    expect(text).toContain('At most <b>3</b> per group.');
    const fields = formFields(text);
    expect(Object.fromEntries(fields)).toMatchObject({
      queue: LATE,
      concurrency: '7',
      rate_limit: '40',
      rate_interval_ms: '1000',
      group_concurrency: '3',
    });
    // The page's statements do not grow with the queues that have group defaults (307 before).
    expect(res.n).toBeLessThanOrEqual(20);

    const saved = await fetch(`${dashboard.url}/actions/set-queue-limits`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: fields.toString(),
      redirect: 'manual',
    });
    expect(saved.status).toBe(303);
    const [row] = await db.query<Record<string, number | null>>(
      `SELECT concurrency_cap, rate_limit, rate_interval_ms, group_concurrency FROM sluice_queues WHERE queue = ?`,
      [LATE],
    );
    expect(row).toEqual({ concurrency_cap: 7, rate_limit: 40, rate_interval_ms: 1_000, group_concurrency: 3 });
    process.stderr.write(`[operations] GET /queues/${LATE} among ${LIMITED} limited queues: ${res.n} statements\n`);
  });

  it('queues.limits({ queues }) reads those queues by key, in two statements, and refuses a bad list', async () => {
    await seed();
    // Jobs held for their group: 10,001 of q00002's (counted up to 10,000), 4 of LATE's.
    await db.query(
      `INSERT INTO sluice_job_holds (job_id, reason, run_at, queue, group_key, priority)
       SELECT seq, 'group', NOW(3), IF(seq <= 10001, 'q00002', '${LATE}'), CONCAT('g', seq % 7), 0
       FROM seq_1_to_10005`,
    );
    const { n, value } = await statementsOf(db.sluice, () =>
      db.sluice.queues.limits({ queues: [LATE, 'q00002', 'nolimits'] }),
    );
    expect(n).toBe(2);
    expect(value.map((l) => [l.queue, l.concurrency, l.groupConcurrency, l.groupHeld])).toEqual([
      ['q00002', 5, 2, 10_000],
      [LATE, 7, 3, 4],
    ]);
    const all = await statementsOf(db.sluice, () => db.sluice.queues.limits());
    expect(all.n).toBe(2);
    expect(all.value.find((l) => l.queue === 'q00002')?.groupHeld).toBe(10_000);
    await expect(db.sluice.queues.limits({ queues: ['bad queue!'] })).rejects.toMatchObject({
      code: 'SLUICE_OPTIONS_INVALID',
      option: 'queues[0]',
    });
    await expect(
      db.sluice.queues.limits({ queues: Array.from({ length: 1_001 }, (_, i) => `q${i}`) }),
    ).rejects.toMatchObject({ option: 'queues' });
    await expect(db.sluice.queues.limits({ queue: LATE } as never)).rejects.toMatchObject({ option: 'queue' });
  });
});
