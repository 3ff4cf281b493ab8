import { type Tracer, type TracerProvider, trace } from '@opentelemetry/api';

/** The instrumentation scope of every span sluice starts. */
const TRACER_NAME = 'sluice';

/** The API's global provider: a proxy that delegates to the SDK's provider once one is registered. */
interface DelegatingProvider extends TracerProvider {
  getDelegate?(): TracerProvider;
  getDelegateTracer?(name: string): Tracer | undefined;
}

let known: { readonly provider: TracerProvider; readonly tracer: Tracer | undefined } | undefined;

/**
 * sluice's tracer when an application registered an OpenTelemetry SDK, else undefined — and then
 * sluice starts no span, writes and reads no trace context, and allocates nothing: the API's own
 * no-op tracer would still make a NonRecordingSpan object per span, and `trace.getTracer()` a
 * ProxyTracer per call. The answer is kept until the registered provider changes: one property
 * read and a comparison per call (an enqueue, a claim), never per job of a claim.
 */
export function activeTracer(): Tracer | undefined {
  const global = trace.getTracerProvider() as DelegatingProvider;
  const provider = global.getDelegate?.() ?? global;
  if (known?.provider !== provider) {
    const tracer = global.getDelegate ? global.getDelegateTracer?.(TRACER_NAME) : global.getTracer(TRACER_NAME);
    known = { provider, tracer };
  }
  return known.tracer;
}
