// os-utils ships no types; these are the functions sluice calls.
declare module 'os-utils' {
  /** CPU busy fraction (0–1) over the next second. */
  export function cpuUsage(callback: (usage: number) => void): void;
  /** Free memory as a fraction (0–1) of total memory. */
  export function freememPercentage(): number;
  export function cpuCount(): number;
  const osUtils: { cpuUsage: typeof cpuUsage; freememPercentage: typeof freememPercentage; cpuCount: typeof cpuCount };
  export default osUtils;
}
