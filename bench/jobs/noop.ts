import { defineJob } from 'sluice';

/** The drain benchmark's job: does nothing, so the drain measures only the queue's own cost. */
export default defineJob({
  name: 'noop',
  handle() {},
});
