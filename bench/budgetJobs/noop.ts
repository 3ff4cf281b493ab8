import { defineJob } from 'sluice';

/** The connection budget's at-least-once job that never touches the database. */
export default defineJob({
  name: 'noop',
  handle() {},
});
