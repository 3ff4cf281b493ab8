/**
 * BENCH_OTEL=1: an OpenTelemetry SDK as an application would register one — AsyncLocalStorage
 * context, every span sampled and recorded — whose spans go nowhere when they end, so that the
 * bench measures what sluice's tracing costs and not an exporter's. The bench process imports
 * this module; drain.ts preloads it (`--import`) into every worker it starts.
 */
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { AlwaysOnSampler, BasicTracerProvider } from '@opentelemetry/sdk-trace-base';

export const otelEnabled = process.env.BENCH_OTEL === '1';

if (otelEnabled) {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(new BasicTracerProvider({ sampler: new AlwaysOnSampler(), spanProcessors: [] }));
}
