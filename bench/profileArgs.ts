/**
 * `BENCH_CPU_PROF_DIR=DIR`: every consumer or worker child a bench starts writes a V8 CPU profile
 * (`node --cpu-prof`) into DIR when it exits, to see where a drain's client time goes (Node
 * refuses --cpu-prof in NODE_OPTIONS, so the flag has to be on each child's command line). The
 * profile includes the child's start-up: look at the samples between its first claim and its
 * last completion. Unset, no flag.
 */
export function profileArgs(): string[] {
  const dir = process.env.BENCH_CPU_PROF_DIR;
  return dir ? ['--cpu-prof', '--cpu-prof-dir', dir] : [];
}
