// Trace context across hops that are not HTTP: W3C `traceparent`/`tracestate` in a Service Bus message's
// application properties and in a Durable activity's input, injected from the active span and extracted by the consumer.
import { context, propagation, ROOT_CONTEXT, trace, type Context, type Link } from '@opentelemetry/api';
import type { TraceCarrier } from './contracts.js';

/** The active span's context as W3C headers; undefined when nothing is traced (no propagator, or no span). */
export function currentTraceCarrier(): TraceCarrier | undefined {
  const headers: Record<string, string> = {};
  propagation.inject(context.active(), headers);
  const traceparent = headers['traceparent'];
  if (traceparent === undefined) return undefined;
  const tracestate = headers['tracestate'];
  return tracestate ? { traceparent, tracestate } : { traceparent };
}

/** The context a carrier names (its span as the remote parent); the root context when it names none. */
export function contextFrom(carrier: Readonly<Record<string, unknown>> | undefined): Context {
  if (carrier === undefined) return ROOT_CONTEXT;
  const headers: Record<string, string> = {};
  for (const key of ['traceparent', 'tracestate']) {
    const value = carrier[key];
    if (typeof value === 'string') headers[key] = value;
  }
  return propagation.extract(ROOT_CONTEXT, headers);
}

/** A link to the span a carrier names, for work that follows from it in a trace of its own. */
export function linkFrom(carrier: Readonly<Record<string, unknown>> | undefined): Link[] {
  const spanContext = trace.getSpanContext(contextFrom(carrier));
  return spanContext && trace.isSpanContextValid(spanContext) ? [{ context: spanContext }] : [];
}

/**
 * The parent a trigger's span takes from the Functions host (its invocation's trace context, with telemetryMode
 * OpenTelemetry), when the host sampled it; otherwise `fallback`.
 */
export function hostParent(
  traceParent: string | undefined,
  traceState: string | undefined,
  fallback: Context,
): Context {
  if (traceParent === undefined || !/-01$/.test(traceParent)) return fallback;
  return contextFrom({ traceparent: traceParent, ...(traceState ? { tracestate: traceState } : {}) });
}

export { ROOT_CONTEXT };
