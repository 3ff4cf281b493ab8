/**
 * What an application keeps of a payload once its job is finished: `redactPayload` in createSluice
 * is called with each job as it is copied into job_history (completed, cancelled) or dead_jobs,
 * and its return value (JSON-serialisable) is stored instead of the payload — drop a card number,
 * keep an order id. The live job keeps its payload: its handler needs it. A hook that throws, or
 * returns what JSON cannot hold, stores a marker saying so rather than the payload.
 */
export type PayloadRedactor = (job: {
  readonly id: number;
  readonly name: string;
  readonly queue: string;
  readonly payload: unknown;
}) => unknown;
