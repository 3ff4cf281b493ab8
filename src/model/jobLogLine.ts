/** One line a handler kept with `ctx.log`, as `sluice.jobs.get` shows it (oldest first). */
export interface JobLogLine {
  /** The attempt that logged it (1 for the first). */
  readonly attempt: number;
  /** When it was logged, on the DB clock (to within the write's round trip). */
  readonly at: Date;
  readonly message: string;
  /** The fields logged with it (JSON); undefined when none. */
  readonly fields?: unknown;
}
