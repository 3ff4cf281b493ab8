/**
 * What one job cost in CPU over a timed window, every system measured alike from /proc: its client
 * processes (the consumer children of a drain, or the producer children of a single enqueue) and
 * its store's server processes on this host. On a host with few cores every system of the grid is
 * CPU-bound at some setting; there the rate follows the CPU per job, so these say why a cell is
 * lost and by how much: cores × 10⁶ ÷ (client + server µs) is the rate the host could reach at most.
 */
export interface JobCpu {
  /** µs per job in the client processes; null where /proc could not be read. */
  readonly clientUs: number | null;
  /** µs per job in the server processes; null when the server does not run on this host. */
  readonly serverUs: number | null;
}

/** Per job of `jobs` (null when nothing was measured). */
export function jobCpu(jobs: number, clientUs: number | null, serverUs: number | null): JobCpu | null {
  if (jobs <= 0 || (clientUs === null && serverUs === null)) return null;
  return {
    clientUs: clientUs === null ? null : clientUs / jobs,
    serverUs: serverUs === null ? null : serverUs / jobs,
  };
}

/** Client and server together, or null unless both were read. */
export function totalUs(cpu: JobCpu | null | undefined): number | null {
  if (!cpu || cpu.clientUs === null || cpu.serverUs === null) return null;
  return cpu.clientUs + cpu.serverUs;
}
