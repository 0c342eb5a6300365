// Telemetry recorded in memory for unit tests: a tracer provider with an in-memory exporter, the async-local context
// manager, the W3C propagator and a meter provider whose metrics a test collects; uninstall() restores the no-ops.
import { context, metrics, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';

export interface MetricPoint {
  name: string;
  attributes: Record<string, unknown>;
  /** A counter's sum, or a histogram's point (its sum and count). */
  value: unknown;
}

export interface InMemoryTelemetry {
  spans: InMemorySpanExporter;
  /** Every metric data point recorded so far. */
  metricPoints(): Promise<MetricPoint[]>;
  uninstall(): Promise<void>;
}

export function installInMemoryTelemetry(): InMemoryTelemetry {
  const spans = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(tracerProvider);
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({
    exporter: metricExporter,
    exportIntervalMillis: 3_600_000,
  });
  const meterProvider = new MeterProvider({ readers: [reader] });
  metrics.setGlobalMeterProvider(meterProvider);

  return {
    spans,
    async metricPoints() {
      await reader.forceFlush();
      return metricExporter.getMetrics().flatMap((resource) =>
        resource.scopeMetrics.flatMap((scope) =>
          scope.metrics.flatMap((metric) =>
            metric.dataPoints.map((point) => ({
              name: metric.descriptor.name,
              attributes: { ...point.attributes },
              value: point.value,
            })),
          ),
        ),
      );
    },
    async uninstall() {
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
      trace.disable();
      metrics.disable();
      propagation.disable();
      context.disable();
    },
  };
}
