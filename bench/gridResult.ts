/**
 * The grid's run as plain data, for the closing JSON line and results/latest.json: rates rounded
 * to whole jobs/s, ratios to two decimals, latencies and CPU per job to 0.1 ms and µs, per-job costs to three
 * decimals.
 */
import type { GridReportInput } from './gridReport.ts';
import { cellVerdict, cellVerdictFromGo } from './gridVerdict.ts';
import { inMemoryResult } from './inMemoryPayloads.ts';
import type { JobCpu } from './jobCpu.ts';
import type { ServerCost } from './serverCounters.ts';
import { ENQUEUERS } from './singleEnqueue.ts';

/** The run as plain data for the closing JSON line. */
export function toGridResult(input: GridReportInput) {
  return {
    quick: input.quick,
    wallSeconds: Math.round(input.wallSeconds),
    loadAverage: { start: round2(input.loadAtStart), end: round2(input.loadAtEnd) },
    systems: input.systems.map((s) => ({
      system: s.key,
      name: s.name,
      durability: s.durability ?? null,
      keeps: s.keeps,
      server: s.serverInfo ?? s.server,
      ...(s.skipped ? { skipped: s.skipped } : {}),
    })),
    grid: input.cells.map(({ cell, runs, targetSeconds, limitSeconds }) => ({
      ...cell,
      targetSeconds: round2(targetSeconds),
      limitSeconds: round2(limitSeconds),
      jobsPerSec: Object.fromEntries(
        runs.map((r) => [r.system, r.jobsPerSec === null ? null : Math.round(r.jobsPerSec)]),
      ),
      // The same drains from 'go', warm-up included (grid.ts, WARM_SHARE).
      jobsPerSecFromGo: Object.fromEntries(
        runs.flatMap((r) => (r.jobsPerSecFromGo === undefined ? [] : [[r.system, Math.round(r.jobsPerSecFromGo)]])),
      ),
      cutOff: runs.filter((r) => r.left > 0).map((r) => r.system),
      enqueued: Object.fromEntries(runs.map((r) => [r.system, r.enqueued])),
      ...cellVerdict(runs),
      ratioFromGo: cellVerdictFromGo(runs).ratio,
      cost: Object.fromEntries(runs.filter((r) => r.cost).map((r) => [r.system, roundCost(r.cost as ServerCost)])),
      cpuUsPerJob: Object.fromEntries(runs.filter((r) => r.cpu).map((r) => [r.system, roundCpu(r.cpu as JobCpu)])),
      ...(runs.some((r) => r.error)
        ? { errors: Object.fromEntries(runs.filter((r) => r.error).map((r) => [r.system, r.error])) }
        : {}),
    })),
    bulkEnqueue: input.bulk.map((b) => ({
      payload: b.payload,
      payloadBytes: b.bytes,
      jobs: b.jobs,
      jobsPerSec: Math.round(b.measurement.jobsPerSec),
      rawJobsPerSec: Math.round(b.measurement.rawJobsPerSec),
      ratio: round2(b.measurement.ratio),
    })),
    singleEnqueue: input.single.map(({ cost, cpu, ...s }) => ({
      ...s,
      ...(cpu ? { cpuUsPerJob: roundCpu(cpu) } : {}),
      enqueuers: ENQUEUERS,
      jobsPerSec: s.jobsPerSec === null ? null : Math.round(s.jobsPerSec),
      ...(cost ? { cost: roundCost(cost) } : {}),
    })),
    pickupMs: input.latency.map((l) => ({
      system: l.system,
      ...(l.latencyMs
        ? { p50: round1(l.latencyMs.p50), p90: round1(l.latencyMs.p90), p99: round1(l.latencyMs.p99) }
        : {}),
      ...(l.error ? { error: l.error } : {}),
    })),
    inMemoryPayloads: inMemoryResult(input.inMemory),
  };
}

function roundCost(c: ServerCost) {
  const r3 = (n: number) => Math.round(n * 1000) / 1000;
  return {
    questions: r3(c.questions),
    statements: Object.fromEntries(Object.entries(c.statements).map(([k, v]) => [k, r3(v)])),
    redoFlushes: r3(c.redoFlushes),
    redoCounter: c.redoCounter,
    dataFsyncs: r3(c.dataFsyncs),
    redoBytes: Math.round(c.redoBytes),
    pagesWritten: r3(c.pagesWritten),
    pagesRead: r3(c.pagesRead),
    serverCpuUs: c.serverCpuUs === null ? null : round1(c.serverCpuUs),
    connectionCpuUs: c.connectionCpuUs === null ? null : round1(c.connectionCpuUs),
  };
}

function roundCpu(c: JobCpu) {
  return {
    client: c.clientUs === null ? null : round1(c.clientUs),
    server: c.serverUs === null ? null : round1(c.serverUs),
  };
}

function round1(n: number): number {
  return Math.round(n * 10) / 10;
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}
