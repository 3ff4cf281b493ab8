/**
 * The repository's job folder, as an app's `jobs/` would be: the PM2 apps of ecosystem.config.js
 * run it. Its one job is the demo's own (src/demo/jobs/demo.ts, which `sluice demo` ships and
 * loads): one copy, re-exported here so that the PM2 fleet drains the same job the demo proves.
 */
export { default } from '../src/demo/jobs/demo.ts';
