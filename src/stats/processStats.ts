import osUtils from 'os-utils';

/** A host load reading: CPU busy fraction and free-memory fraction, each 0–1. */
export interface LoadReading {
  readonly cpu: number;
  readonly freeMem: number;
}

/** Reads the host's load with os-utils (the CPU figure is sampled over one second). */
export function readHostLoad(): Promise<LoadReading> {
  return new Promise((resolve) => {
    osUtils.cpuUsage((cpu) => resolve({ cpu, freeMem: osUtils.freememPercentage() }));
  });
}
