import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { insertJob } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * The job page shows the job's attempt errors (newest first, stacks folded) and its ctx.log lines
 * with the count of dropped ones — escaped, and the lines' fields through the payload mask.
 */
const db = useTestDatabase('dashboard_attempts');

async function page(path: string): Promise<string> {
  const handler = db.sluice.dashboard({ auth: false });
  const server = createServer((req, res) => handler(req, res, () => res.writeHead(404).end()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`);
    expect(response.status).toBe(200);
    return await response.text();
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

describe('job page: attempts', () => {
  it('lists attempt errors and log lines, escaped and masked', async () => {
    const id = await insertJob(db, { retryTimes: 2, lastError: 'Error: <b>second</b>' });
    await db.query(
      `INSERT INTO sluice_job_errors (job_id, attempt, failed_at, worker_id, code, message, stack) VALUES
       (?, 1, NOW(3) - INTERVAL 1 MINUTE, 'host-1~k1', 'ECONNREFUSED', 'first <i>failure</i>', 'Error: first\n    at here'),
       (?, 2, NOW(3), NULL, 'SLUICE_WORKER_DIED', 'worker of claim k1.2 stopped heartbeating (died or stalled)', NULL)`,
      [id, id],
    );
    await db.query(
      `INSERT INTO sluice_job_logs (job_id, attempt, line, logged_at, message, fields, dropped) VALUES
       (?, 1, 1, NOW(3), 'sending <mail>', '{"to":"a@b","password":"hunter2"}', 0),
       (?, 1, 0, NOW(3), '', NULL, 3)`,
      [id, id],
    );
    const text = await page(`/jobs/${id}`);
    const errors = text.slice(text.indexOf('data-field="errors"'), text.indexOf('data-field="logs"'));
    expect(errors.indexOf('data-attempt="2"')).toBeLessThan(errors.indexOf('data-attempt="1"'));
    expect(errors).toContain('SLUICE_WORKER_DIED');
    expect(errors).toContain('host-1~k1');
    expect(errors).toContain('first &lt;i&gt;failure&lt;/i&gt;');
    expect(errors).toContain('<summary>stack</summary><pre class="error">Error: first\n    at here</pre>');
    const logs = text.slice(text.indexOf('data-field="logs"'));
    expect(logs).toContain('#1  sending &lt;mail&gt;');
    expect(logs).toContain('a@b');
    expect(logs).not.toContain('hunter2');
    expect(logs).toContain('3 more line(s) dropped');
  });

  it('says so when no attempt failed and nothing was logged', async () => {
    const id = await insertJob(db);
    const text = await page(`/jobs/${id}`);
    expect(text).toContain('No failed attempt kept.');
    expect(text).toContain('No lines logged (ctx.log).');
  });
});
