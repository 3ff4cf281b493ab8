/** What a page shows of a job's payload (or result, or progress): the hook gets the job and returns what to show. */
export type PayloadMask = (job: {
  readonly id: number;
  readonly name: string;
  readonly queue: string;
  readonly payload: unknown;
}) => unknown;

/** Field names that usually hold a secret. */
const SECRET_KEY = /pass(word)?|secret|token|api[-_]?key|authorization|credential|private[-_]?key|cookie/i;

export const MASKED = '••••••';

/**
 * The default mask: every field, at any depth, whose name looks like a secret shows as ••••••.
 * A copy made without recursion, so that a value nested 100,000 deep is masked all the way down
 * (the raw download writes all of it).
 */
export const maskSecrets: PayloadMask = (job) => {
  const root: { value: unknown } = { value: undefined };
  const work: [unknown, (copy: unknown) => void][] = [[job.payload, (copy) => (root.value = copy)]];
  for (let item = work.pop(); item; item = work.pop()) {
    const [value, place] = item;
    if (value === null || typeof value !== 'object') {
      place(value);
    } else if (Array.isArray(value)) {
      const copy: unknown[] = new Array(value.length);
      place(copy);
      for (let i = 0; i < value.length; i++) work.push([value[i], (c) => (copy[i] = c)]);
    } else {
      const copy: Record<string, unknown> = {};
      place(copy);
      for (const [key, v] of Object.entries(value)) {
        // Every key is set now, in order; the copy of its value fills it in later.
        copy[key] = SECRET_KEY.test(key) ? MASKED : null;
        if (copy[key] === null) work.push([v, (c) => (copy[key] = c)]);
      }
    }
  }
  return root.value;
};
