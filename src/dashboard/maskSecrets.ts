/** What a page shows of a job's payload (or result): the hook gets the job and returns what to show. */
export type PayloadMask = (job: {
  readonly id: number;
  readonly name: string;
  readonly queue: string;
  readonly payload: unknown;
}) => unknown;

/** Field names that usually hold a secret. */
const SECRET_KEY = /pass(word)?|secret|token|api[-_]?key|authorization|credential|private[-_]?key|cookie/i;

export const MASKED = '••••••';

/** The default mask: every field, at any depth, whose name looks like a secret shows as ••••••. */
export const maskSecrets: PayloadMask = (job) => maskValue(job.payload, 0);

function maskValue(value: unknown, depth: number): unknown {
  if (depth > 32 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => maskValue(v, depth + 1));
  return Object.fromEntries(
    Object.entries(value).map(([key, v]) => [key, SECRET_KEY.test(key) ? MASKED : maskValue(v, depth + 1)]),
  );
}
