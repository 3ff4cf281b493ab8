import type { MaintenanceHealth } from '../maintenance/maintenanceHealth.ts';
import { count, duration } from './format.ts';
import { html } from './html.ts';

/** A last pass older than this says maintenance is not running (passes are seconds apart by default). */
const STALE_MS = 60_000;

/** What stops when maintenance does, said wherever the panel warns. */
const STOPS =
  "crashed workers' jobs are not recovered, finished batches get no completion job, run-time schedules do not fire and promises are not judged";

/**
 * The overview's maintenance health (sluice.workers.maintenance()): who leads, how long ago the
 * last pass ran, the tasks behind, and each task's last run in a table; a warning when no
 * maintenance process ever ran here, the leader let its lease run out, or the last pass is old.
 */
export function maintenancePanel(health: MaintenanceHealth) {
  const state =
    health.tasks.length === 0 && health.leader === null
      ? 'none'
      : health.leader === null ||
          health.leaseExpiredForMs !== null ||
          health.lastPassAgoMs === null ||
          health.lastPassAgoMs > STALE_MS
        ? 'stale'
        : 'ok';
  const behind = health.tasks.filter((t) => t.behind).map((t) => t.task);
  const last = health.lastPassAgoMs === null ? 'no pass recorded' : `last pass ${duration(health.lastPassAgoMs)} ago`;
  const summary =
    state === 'none'
      ? html`<p class="notice failure">No maintenance process has run against these tables: ${STOPS}. Start one: <code>sluice maintenance</code>.</p>`
      : state === 'stale'
        ? html`<p class="notice failure">Maintenance is not running: ${health.leader === null ? 'no process holds the leader lease' : html`the leader <code>${health.leader}</code> ${health.leaseExpiredForMs === null ? 'holds its lease' : `let its lease run out ${duration(health.leaseExpiredForMs)} ago`}`}; ${last}. Meanwhile ${STOPS}.</p>`
        : html`<p>Maintenance: led by <code>${health.leader ?? ''}</code>; ${last}${behind.length > 0 ? html`; behind, going on next pass: ${behind.join(', ')}` : ''}.</p>`;
  return html`<section class="maintenance" data-maintenance="${state}">
${summary}
${
  health.tasks.length === 0
    ? ''
    : html`<details><summary>Maintenance tasks (${health.tasks.length}), as the leader recorded them</summary>
<table class="tasks">
<thead><tr><th>task</th><th>last run</th><th>took</th><th>changed</th><th>behind</th><th>run by</th></tr></thead>
<tbody>${health.tasks.map(
        (t) =>
          html`<tr data-task="${t.task}"><td>${t.task}</td><td class="num">${duration(t.agoMs)} ago</td><td class="num">${duration(t.durationMs)}</td><td class="num">${count(t.changed)}</td><td>${t.behind ? 'yes' : ''}</td><td><code>${t.ranBy}</code></td></tr>`,
      )}</tbody>
</table>
</details>`
}
</section>`;
}
