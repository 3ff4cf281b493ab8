import { setTimeout as sleep } from 'node:timers/promises';
import { defineJob } from 'sluice';

/** bench handoff's job: waits `ms` (a handler that awaits a call), so a slot is held that long. */
export default defineJob<{ ms: number }>({
  name: 'sleep',
  async handle({ ms }) {
    await sleep(ms);
  },
});
