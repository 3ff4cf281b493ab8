/**
 * The soak's verdict (bench/soak.ts): did the steady state hold? Pruning: history near retention ×
 * rate and flat over the last third of the run. The drain: the backlog of the last third within
 * two seconds of work, the probes' pickup latency as low at the end as at the start, no dead job,
 * and the backlog back to 0 once the producer stopped.
 */

/** One reading of the soak, every ~10 s. */
export interface SoakSample {
  readonly atS: number;
  /** Rows in the live jobs table (waiting or running). */
  readonly backlog: number;
  readonly history: number;
  readonly dead: number;
  /** Jobs finished per second over the interval. */
  readonly doneRate: number;
  /** History rows pruned per second over the interval (rows in + rows finished − rows now). */
  readonly pruneRate: number;
  readonly probeP50Ms: number | null;
  readonly probeP90Ms: number | null;
  readonly probes: number;
}

export interface SoakVerdict {
  /** Retention × rate: what history holds when pruning keeps pace. */
  readonly historyTarget: number;
  /** The largest history of the last third. */
  readonly historyPlateau: number;
  /** History per second over the last third (≈ 0 on a plateau). */
  readonly historyGrowthPerS: number;
  readonly historyOk: boolean;
  /** The median of the per-interval probe p90s of the first third, and of the last third. */
  readonly latencyFirstP90Ms: number | null;
  readonly latencyLastP90Ms: number | null;
  readonly latencyOk: boolean;
  /** The largest backlog of the last third. */
  readonly backlogPeak: number;
  readonly backlogOk: boolean;
  readonly backlogAfter: number;
  readonly dead: number;
  readonly ok: boolean;
}

/** History may sit above retention × rate by what one pruning pass and its pauses leave behind. */
const HISTORY_SLACK = 1.5;
/** Growth over the last third below this share of the rate counts as flat. */
const GROWTH_SHARE = 0.05;
/** The last third's p90 may exceed the first third's by this factor, plus a fixed allowance. */
const LATENCY_FACTOR = 2;
const LATENCY_ALLOWANCE_MS = 50;
/** A fleet that keeps up holds at most this many seconds of work waiting. */
const BACKLOG_SECONDS = 2;

/** Pure: the verdict of a soak's samples. */
export function soakVerdict(
  samples: readonly SoakSample[],
  run: { readonly rate: number; readonly retentionS: number; readonly backlogAfter: number; readonly dead: number },
): SoakVerdict {
  const historyTarget = run.rate * run.retentionS;
  const third = Math.max(1, Math.floor(samples.length / 3));
  const first = samples.slice(0, third);
  const last = samples.slice(-third);
  const historyPlateau = Math.max(0, ...last.map((s) => s.history));
  const a = last[0];
  const b = last[last.length - 1];
  const historyGrowthPerS = a && b && b.atS > a.atS ? Math.round((b.history - a.history) / (b.atS - a.atS)) : 0;
  const historyOk =
    samples.length >= 3 &&
    historyPlateau <= HISTORY_SLACK * historyTarget &&
    historyGrowthPerS <= GROWTH_SHARE * run.rate;
  const latencyFirstP90Ms = medianOf(first.map((s) => s.probeP90Ms));
  const latencyLastP90Ms = medianOf(last.map((s) => s.probeP90Ms));
  const latencyOk =
    latencyFirstP90Ms !== null &&
    latencyLastP90Ms !== null &&
    latencyLastP90Ms <= LATENCY_FACTOR * latencyFirstP90Ms + LATENCY_ALLOWANCE_MS;
  const backlogPeak = Math.max(0, ...last.map((s) => s.backlog));
  const backlogOk = backlogPeak <= BACKLOG_SECONDS * run.rate;
  return {
    historyTarget,
    historyPlateau,
    historyGrowthPerS,
    historyOk,
    latencyFirstP90Ms,
    latencyLastP90Ms,
    latencyOk,
    backlogPeak,
    backlogOk,
    backlogAfter: run.backlogAfter,
    dead: run.dead,
    ok: historyOk && latencyOk && backlogOk && run.backlogAfter === 0 && run.dead === 0,
  };
}

/** The median of the known values (one noisy interval on a shared host does not decide). */
function medianOf(values: readonly (number | null)[]): number | null {
  const known = values.filter((v): v is number => v !== null).sort((a, b) => a - b);
  return known.length === 0 ? null : (known[Math.floor((known.length - 1) / 2)] as number);
}
