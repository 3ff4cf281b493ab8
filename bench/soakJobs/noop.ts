import { defineJob } from 'sluice';

/** The soak's load: does nothing, so the soak measures only the queue and its upkeep. */
export default defineJob({
  name: 'noop',
  handle() {},
});
