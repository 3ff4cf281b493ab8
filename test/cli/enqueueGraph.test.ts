import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows } from '../helpers/factory.ts';
import { type CliResult, runCli } from '../helpers/runCli.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * docs/workflows.md "From a file": `sluice enqueue` reads a graph from NDJSON — each line's `ref`,
 * `parents` (refs of earlier lines, or live job ids, with `continueOnFailure` per edge) and
 * `continueOnFailure` — and writes it like enqueueBatch: with --atomic a graph of any length in
 * one batch; in chunked mode a ref that names a line of another chunk is refused, naming its line.
 */
const db = useTestDatabase('cli_enqueue_graph');
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sluice-enqueue-graph-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function file(name: string, lines: readonly unknown[]): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
  return path;
}

function enqueue(args: readonly string[]): Promise<CliResult> {
  return runCli(['enqueue', ...args, '--url', db.url]);
}

/** A fan-out of `width` leaves after a root, feeding a fan-in, then a job that runs whatever happened. */
function graph(width: number): unknown[] {
  const leaves = Array.from({ length: width }, (_, i) => ({ name: 'leaf', ref: `leaf-${i}`, parents: ['root'] }));
  return [
    { name: 'root', ref: 'root' },
    ...leaves,
    { name: 'fan-in', ref: 'fan-in', parents: leaves.map((l) => l.ref) },
    { name: 'notify', parents: [{ job: 'fan-in', continueOnFailure: true }] },
    { name: 'audit', parents: ['root'], continueOnFailure: true },
  ];
}

describe('sluice enqueue of a graph', () => {
  it('--atomic reads a graph file of 2,504 lines whole and writes it as one batch, edges and holds included', async () => {
    const result = await enqueue([await file('graph.ndjson', graph(2_500)), '--atomic']);
    expect(result.code, result.stderr).toBe(0);
    expect(await countRows(db, 'sluice_batches')).toBe(1);
    expect(await countRows(db, 'sluice_jobs')).toBe(2_504);
    expect(await countRows(db, 'sluice_job_edges')).toBe(2_500 + 2_500 + 1 + 1);
    expect(await countRows(db, 'sluice_job_edges', 'continue_on_failure = 1')).toBe(2);
    expect(await countRows(db, 'sluice_job_holds')).toBe(2_503);
    const [root] = await db.query<{ id: number }>("SELECT id FROM sluice_jobs WHERE name = 'root'");
    const info = await db.sluice.jobs.get(Number(root?.id));
    expect(info?.workflow?.children).toHaveLength(1_000); // listed up to the cap, the rest counted elsewhere
  });

  it('without --atomic, a graph within one chunk is written; a ref to another chunk is refused with its line', async () => {
    const small = await enqueue([await file('small.ndjson', graph(3))]);
    expect(small.code, small.stderr).toBe(0);
    expect(await countRows(db, 'sluice_job_edges')).toBe(3 + 3 + 1 + 1);
    const split = await enqueue([await file('split.ndjson', graph(3)), '--batch-size', '2']);
    expect(split.code).toBe(1);
    expect(split.stderr).toMatch(/line 3: parents\S* names unknown ref "root"/);
    expect(split.stderr).toContain('--atomic');
  });

  it('jobs get prints a job’s parents, children and what it waits for; jobs graph lists the graph by batch or by a job', async () => {
    expect((await enqueue([await file('diamond.ndjson', graph(2)), '--atomic'])).code).toBe(0);
    const ids = Object.fromEntries(
      (await db.query<{ id: number; name: string }>('SELECT id, name FROM sluice_jobs ORDER BY id')).map((r) => [
        r.name,
        Number(r.id),
      ]),
    );
    const get = await runCli(['jobs', 'get', String(ids['fan-in']), '--url', db.url]);
    expect(get.code, get.stderr).toBe(0);
    expect(get.stdout).toMatch(/waiting for\s+2 parent\(s\) to finish/);
    expect(get.stdout).toMatch(/parents\s+\d+ pending, \d+ pending/);
    expect(get.stdout).toMatch(new RegExp(`children\\s+${ids.notify}`));
    const byJob = await runCli(['jobs', 'graph', '--job', String(ids.notify), '--url', db.url]);
    expect(byJob.code, byJob.stderr).toBe(0);
    const rows = byJob.stdout.split('\n').filter((l) => /^\s*\d+\s/.test(l));
    expect(rows).toHaveLength(6);
    expect(rows.find((r) => r.includes('fan-in'))).toMatch(/held\s+fan-in\s+\d+ \d+\s+\d+/);
    const [{ batch_id: batchId }] = (await db.query<{ batch_id: number }>(
      'SELECT batch_id FROM sluice_jobs LIMIT 1',
    )) as [{ batch_id: number }];
    const json = await runCli(['jobs', 'graph', '--batch', String(batchId), '--json', '--url', db.url]);
    const page = JSON.parse(json.stdout) as { jobs: { id: number; parents: { id: number }[]; children: number[] }[] };
    expect(page.jobs.find((j) => j.id === ids.root)?.children).toHaveLength(3); // 2 leaves and audit
    expect((await runCli(['jobs', 'graph', '--url', db.url])).code).toBe(2);
  });
});
