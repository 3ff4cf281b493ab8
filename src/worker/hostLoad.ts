import { totalmem } from 'node:os';
import osUtils from 'os-utils';

/** A host load reading: CPU busy fraction and free-memory fraction, each 0–1. */
export interface LoadReading {
  readonly cpu: number;
  readonly freeMem: number;
}

/**
 * Reads the host's load: CPU with os-utils (sampled over one second), free memory from Node, which
 * knows the container's limit (a cgroup) where os-utils reads only the host's memory — a worker in
 * a 512 MB container on a 64 GB host would never see pressure.
 */
export function readHostLoad(): Promise<LoadReading> {
  return new Promise((resolve) => {
    osUtils.cpuUsage((cpu) => resolve({ cpu, freeMem: freeMemoryFraction(memoryFigures()) }));
  });
}

export interface MemoryFigures {
  /** Bytes free to this process (Node's process.availableMemory(): the cgroup's room, or the host's free memory). */
  readonly available: number;
  /** The cgroup's limit in bytes, or 0 / a huge number when there is none (process.constrainedMemory()). */
  readonly constrained: number;
  /** The host's memory in bytes. */
  readonly total: number;
}

function memoryFigures(): MemoryFigures {
  const proc = process as NodeJS.Process & { availableMemory?: () => number; constrainedMemory?: () => number };
  return {
    available: proc.availableMemory?.() ?? osUtils.freememPercentage() * totalmem(),
    constrained: proc.constrainedMemory?.() ?? 0,
    total: totalmem(),
  };
}

/** Pure: the free fraction of the memory this process may use — of the cgroup's limit where one is set below the host's memory. */
export function freeMemoryFraction({ available, constrained, total }: MemoryFigures): number {
  const limit = constrained > 0 && constrained < total ? constrained : total;
  return Math.max(0, Math.min(1, available / limit));
}
