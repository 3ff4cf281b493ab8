import { describe, expect, it } from 'vitest';
import { basicAuth } from '../../src/index.ts';
import { useDashboard } from '../helpers/dashboardServer.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

const db = useTestDatabase('workflow_dashboard');
const OPS = { user: 'ops', password: 'correct horse battery staple' };
const dashboard = useDashboard(() => db.sluice, { auth: basicAuth(OPS) });
const AUTH = { authorization: `Basic ${Buffer.from(`${OPS.user}:${OPS.password}`).toString('base64')}` };

describe('the dashboard job page of a workflow job', () => {
  it('links its parents and children and says what a held job waits for', async () => {
    const { batchId } = await db.sluice.enqueueBatch([
      { name: 'a', ref: 'a' },
      { name: 'b', ref: 'b' },
      { name: 'c', parents: ['a', { job: 'b', continueOnFailure: true }] },
    ]);
    const ids = Object.fromEntries(
      (await db.sluice.jobs.list({ batchId: batchId as number })).jobs.map((j) => [j.name, j.id]),
    );
    const child = await (await fetch(`${dashboard.url}/jobs/${ids.c}`, { headers: AUTH })).text();
    expect(child).toContain('data-state="held"');
    expect(child).toContain('2 parent(s) to finish');
    expect(child).toContain(`href="/jobs/${ids.a}" data-job="${ids.a}"`);
    expect(child).toContain('pending, continue on failure');
    expect(child).toContain('data-action="cancel-job"');
    // The neighbourhood drawn: a box (a link) per parent and the job, a line per edge.
    const svg = /<svg class="workflow"[\s\S]*?<\/svg>/.exec(child)?.[0] ?? '';
    expect(svg.match(/<rect /g)).toHaveLength(3);
    expect(svg.match(/<line /g)).toHaveLength(2);
    expect(svg).toContain(`href="/jobs/${ids.b}"`);
    const parent = await (await fetch(`${dashboard.url}/jobs/${ids.a}`, { headers: AUTH })).text();
    expect(parent).toMatch(new RegExp(`data-field="children"><a href="/jobs/${ids.c}"`));
  });

  it('says "or more" of a fan wider than one read lists', async () => {
    const { batchId } = await db.sluice.enqueueBatch([
      { name: 'root', ref: 'root' },
      ...Array.from({ length: 1_001 }, () => ({ name: 'leaf', parents: ['root'] })),
    ]);
    const [root] = (await db.sluice.jobs.list({ batchId: batchId as number, name: 'root' })).jobs;
    const page = await (await fetch(`${dashboard.url}/jobs/${root?.id}`, { headers: AUTH })).text();
    expect(page).toContain('(1000 or more in all)');
  });
});
