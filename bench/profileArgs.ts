/**
 * Flags for every consumer or worker child a bench starts (the grid's and `drainAB.ts`'s), set from
 * the environment; unset, none. Node refuses these in NODE_OPTIONS, so they go on each child's
 * command line.
 *
 * - `BENCH_CPU_PROF_DIR=DIR`: a V8 CPU profile into DIR when the child exits (`--cpu-prof`), to
 *   see where a drain's client time goes. It includes the child's start-up: look at the samples
 *   between its first claim and its last completion. The profiler itself slows a kilobyte drain by
 *   about a third.
 * - `BENCH_TRACE_GC=1`: one line per collection on the child's stdout (`--trace-gc-nvp`), which
 *   the bench passes to its stderr; `gcSummary.ts` sums them per process.
 * - `BENCH_CHILD_NODE_FLAGS="--flag …"`: more V8 or Node flags, for an A/B of the runtime's
 *   settings (e.g. `--max-semi-space-size=64`); children of every system get them alike.
 */
export function profileArgs(): string[] {
  const dir = process.env.BENCH_CPU_PROF_DIR;
  const extra = (process.env.BENCH_CHILD_NODE_FLAGS ?? '').split(/\s+/).filter((flag) => flag !== '');
  return [
    ...(dir ? ['--cpu-prof', '--cpu-prof-dir', dir] : []),
    ...(process.env.BENCH_TRACE_GC === '1' ? ['--trace-gc-nvp'] : []),
    ...extra,
  ];
}
