import { defineJob } from 'sluice';

/**
 * bench/jobs/noop.ts returning a small result: `npm run bench -- ab --base DIR
 * --jobs-dir-b bench/resultJobs` measures what keeping every job's result costs the drain.
 */
export default defineJob({
  name: 'noop',
  handle: (payload: { n: number }) => ({ ok: true, n: payload.n }),
});
