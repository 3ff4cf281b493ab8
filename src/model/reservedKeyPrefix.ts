/**
 * Idempotency keys that sluice gives its own jobs (a batch's completion job) start with this;
 * validation refuses it on an application's job, so the two can never collide.
 */
export const RESERVED_KEY_PREFIX = 'sluice:';
