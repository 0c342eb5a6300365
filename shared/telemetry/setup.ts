// Starts the process's telemetry from its config: Azure Monitor (with the app's credential) when Application
// Insights is configured, OTLP over HTTP when an endpoint is; otherwise nothing is loaded and the API stays a no-op.
import { context, diag, metrics, propagation, trace } from '@opentelemetry/api';
import type { TelemetryConfig } from './settings.js';

/** The part of an Azure TokenCredential the Azure Monitor exporter calls. */
export interface TelemetryCredential {
  getToken(
    scopes: string | string[],
    options?: object,
  ): Promise<{ token: string; expiresOnTimestamp: number } | null>;
}

export interface Telemetry {
  /** What exports: `none`, `otlp`, `azure-monitor` or both joined by `+`. */
  readonly exporters: string;
  /** Exports what is buffered now (tests, and a process about to be frozen). */
  flush(): Promise<void>;
  /** Flushes, stops exporting and gives the global API back its no-ops. */
  shutdown(): Promise<void>;
}

const NONE: Telemetry = {
  exporters: 'none',
  flush: () => Promise.resolve(),
  shutdown: () => Promise.resolve(),
};

let running: Telemetry | undefined;

export async function startTelemetry(
  config: TelemetryConfig,
  options: { credential?: TelemetryCredential | undefined } = {},
): Promise<Telemetry> {
  if (config.azureMonitor === undefined && config.otlp === undefined) return NONE;
  if (running !== undefined) throw new Error('Telemetry is already running in this process.');
  const otlp = config.otlp ? await otlpPipeline(config.otlp) : undefined;
  const { resourceFromAttributes } = await import('@opentelemetry/resources');
  const resource = resourceFromAttributes({ 'service.name': config.serviceName });

  let stop: () => Promise<void>;
  let flush: () => Promise<void>;
  if (config.azureMonitor) {
    const monitor = await import('@azure/monitor-opentelemetry');
    monitor.useAzureMonitor({
      azureMonitorExporterOptions: {
        connectionString: config.azureMonitor.connectionString,
        ...(options.credential ? { credential: options.credential } : {}),
      },
      resource,
      ...(otlp ? { spanProcessors: [otlp.spans], metricReaders: [otlp.metrics] } : {}),
    });
    flush = async () => {
      await otlp?.spans.forceFlush();
      await otlp?.metrics.forceFlush();
    };
    stop = () => monitor.shutdownAzureMonitor();
  } else if (otlp) {
    const { NodeTracerProvider } = await import('@opentelemetry/sdk-trace-node');
    const { MeterProvider } = await import('@opentelemetry/sdk-metrics');
    const tracerProvider = new NodeTracerProvider({ resource, spanProcessors: [otlp.spans] });
    // Sets the async-local context manager and the W3C trace context and baggage propagators too.
    tracerProvider.register();
    const meterProvider = new MeterProvider({ resource, readers: [otlp.metrics] });
    metrics.setGlobalMeterProvider(meterProvider);
    flush = async () => {
      await tracerProvider.forceFlush();
      await meterProvider.forceFlush();
    };
    stop = async () => {
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
    };
  } else return NONE;

  const exporters = [config.azureMonitor ? 'azure-monitor' : '', otlp ? 'otlp' : '']
    .filter(Boolean)
    .join('+');
  const telemetry: Telemetry = {
    exporters,
    flush,
    shutdown: async () => {
      if (running !== telemetry) return;
      try {
        await stop();
      } finally {
        running = undefined;
        trace.disable();
        metrics.disable();
        propagation.disable();
        context.disable();
        diag.disable();
      }
    },
  };
  running = telemetry;
  return telemetry;
}

/** The OTLP/HTTP exporters of `config`, in batches: a span processor and a periodic metric reader. */
async function otlpPipeline(config: NonNullable<TelemetryConfig['otlp']>) {
  const { BatchSpanProcessor } = await import('@opentelemetry/sdk-trace-base');
  const { PeriodicExportingMetricReader } = await import('@opentelemetry/sdk-metrics');
  const traces = { url: `${config.endpoint}/v1/traces` };
  const metricsUrl = { url: `${config.endpoint}/v1/metrics` };
  const json = config.protocol === 'http/json';
  const spanExporter = json
    ? new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter(traces)
    : new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter(traces);
  const metricExporter = json
    ? new (await import('@opentelemetry/exporter-metrics-otlp-http')).OTLPMetricExporter(metricsUrl)
    : new (await import('@opentelemetry/exporter-metrics-otlp-proto')).OTLPMetricExporter(metricsUrl);
  return {
    spans: new BatchSpanProcessor(spanExporter),
    metrics: new PeriodicExportingMetricReader({
      exporter: metricExporter,
      exportIntervalMillis: config.metricIntervalMs,
    }),
  };
}
