import type { Action } from './actions/Action.ts';
import { bulkJobActions } from './actions/bulkJobActions.ts';
import { cancelJobAction } from './actions/cancelJobAction.ts';
import { enqueueScheduleAction } from './actions/enqueueScheduleAction.ts';
import { pauseQueueAction } from './actions/pauseQueueAction.ts';
import { purgeDeadJobAction } from './actions/purgeDeadAction.ts';
import { redriveDeadJobAction } from './actions/redriveDeadAction.ts';
import { resumeQueueAction } from './actions/resumeQueueAction.ts';
import { runJobNowAction } from './actions/runJobNowAction.ts';
import { scheduleControlAction } from './actions/scheduleControlAction.ts';
import { setQueueLimitsAction } from './actions/setQueueLimitsAction.ts';
import type { Page } from './PageContext.ts';
import { batchesPage } from './pages/batchesPage.ts';
import { batchPage } from './pages/batchPage.ts';
import { deadJobsPage } from './pages/deadJobsPage.ts';
import { failuresPage } from './pages/failuresPage.ts';
import { jobPage, jobValuePage } from './pages/jobPage.ts';
import { jobsPage } from './pages/jobsPage.ts';
import { overviewPage } from './pages/overviewPage.ts';
import { queuePage } from './pages/queuePage.ts';
import { schedulesPage } from './pages/schedulesPage.ts';
import { searchPage } from './pages/searchPage.ts';
import { workersPage } from './pages/workersPage.ts';

/** GET pages: a path pattern (below basePath) and its page; captured groups are the page's params. */
const PAGES: readonly [RegExp, Page][] = [
  [/^\/?$/, overviewPage],
  [/^\/queues\/([^/]+)$/, queuePage],
  [/^\/jobs$/, jobsPage],
  [/^\/jobs\/([^/]+)$/, jobPage],
  [/^\/jobs\/([^/]+)\/(payload|result|progress|logs)\.json$/, jobValuePage],
  [/^\/dead$/, deadJobsPage],
  [/^\/failures$/, failuresPage],
  [/^\/workers$/, workersPage],
  [/^\/batches$/, batchesPage],
  [/^\/batches\/([^/]+)$/, batchPage],
  [/^\/schedules$/, schedulesPage],
  [/^\/search$/, searchPage],
];

/** POST /actions/<name>. */
const ACTIONS: ReadonlyMap<string, Action> = new Map(
  [
    pauseQueueAction,
    resumeQueueAction,
    setQueueLimitsAction,
    cancelJobAction,
    runJobNowAction,
    redriveDeadJobAction,
    purgeDeadJobAction,
    enqueueScheduleAction,
    scheduleControlAction,
    ...bulkJobActions,
  ].map((a) => [a.name, a]),
);

export function matchPage(path: string): { page: Page; params: string[] } | null {
  for (const [pattern, page] of PAGES) {
    const match = pattern.exec(path);
    if (match) return { page, params: match.slice(1) };
  }
  return null;
}

export function findAction(path: string): Action | null {
  const match = /^\/actions\/([a-z-]+)$/.exec(path);
  return (match && ACTIONS.get(match[1] as string)) ?? null;
}
