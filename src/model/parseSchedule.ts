import cron from 'node-cron';

/** Pure: why a cron expression / time zone pair is unusable, or null when it is fine. */
export function scheduleProblem(schedule: unknown, timezone: unknown): string | null {
  if (typeof schedule !== 'string' || !cron.validate(schedule))
    return `schedule must be a node-cron expression (got ${JSON.stringify(schedule)})`;
  if (timezone !== undefined) {
    if (typeof timezone !== 'string') return 'timezone must be an IANA zone name';
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    } catch {
      return `timezone ${JSON.stringify(timezone)} is not an IANA zone name`;
    }
  }
  return null;
}

/**
 * Pure: the identity of one tick, the same in every scheduler process: the tick's time to the
 * second, in UTC ISO form. It names the job's idempotency key, `<name>@<slot>`.
 */
export function slotOf(tick: Date): string {
  const second = new Date(Math.floor(tick.getTime() / 1000) * 1000);
  return second.toISOString();
}
