import { describe, expect, it } from 'vitest';
import { useDashboard } from '../helpers/dashboardServer.ts';
import { statementsOf } from '../helpers/statementsOf.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * Whether maintenance runs, on the overview and from sluice.workers.maintenance(): nothing ever
 * ran; a leader that just ran a pass (each task's last run, as it recorded them in one statement);
 * a leader that stopped (the lease given up: "not running", with what stops meanwhile). The read
 * is one statement.
 */
const db = useTestDatabase('maintenance_health');
const dashboard = useDashboard(() => db.sluice, { auth: false });

const overview = async () => (await fetch(`${dashboard.url}/`)).text();
const panelOf = (page: string) => /<section class="maintenance"[\s\S]*?<\/section>/.exec(page)?.[0] ?? '';

describe('maintenance health', () => {
  it('says so when no maintenance process ever ran, and what stops meanwhile', async () => {
    const read = await statementsOf(db.sluice, () => db.sluice.workers.maintenance());
    expect(read).toEqual({ n: 1, value: { leader: null, leaseExpiredForMs: null, tasks: [], lastPassAgoMs: null } });
    const panel = panelOf(await overview());
    expect(panel).toContain('data-maintenance="none"');
    expect(panel).toContain('No maintenance process has run against these tables');
    expect(panel).toContain('jobs are not recovered, finished batches get no completion job');
  });

  it("shows the leader and each task's last run after a pass, then 'not running' once it stopped", async () => {
    const maintenance = db.sluice.maintenance({ jitterMs: 0 });
    const pass = await maintenance.runOnce();
    const health = await db.sluice.workers.maintenance();
    expect(health.leader).toBe(maintenance.holder);
    expect(health.leaseExpiredForMs).toBeNull();
    expect(health.tasks.map((t) => t.task).sort()).toEqual(Object.keys(pass.tasks).sort());
    for (const task of health.tasks) {
      expect(task.ranBy).toBe(maintenance.holder);
      expect(task.agoMs).toBeLessThan(60_000);
      expect(task.durationMs).toBeGreaterThanOrEqual(0);
      expect(task.behind).toBe(false);
    }
    expect(health.lastPassAgoMs).toBe(health.tasks[0]?.agoMs);
    const ok = panelOf(await overview());
    expect(ok).toContain('data-maintenance="ok"');
    expect(ok).toContain(`led by <code>${maintenance.holder}</code>`);
    expect(ok).toContain('data-task="releaseDeadWorkers"');
    expect(ok).toContain('data-task="checkQueues"');

    // Stopping gives the lease up: nobody leads, and the page says what that means.
    await maintenance.stop();
    expect((await db.sluice.workers.maintenance()).leader).toBeNull();
    const stopped = panelOf(await overview());
    expect(stopped).toContain('data-maintenance="stale"');
    expect(stopped).toContain('Maintenance is not running: no process holds the leader lease');
    // The tasks' last runs stay visible.
    expect(stopped).toContain('data-task="releaseDeadWorkers"');
  });
});
