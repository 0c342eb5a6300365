// Where telemetry goes (OTEL_*, with APPLICATIONINSIGHTS_CONNECTION_STRING from the platform settings) and whether
// message text may go with it: nothing is exported unless an exporter is named, and no text unless opted in.
import {
  choiceSetting,
  defineSettings,
  intSetting,
  textSetting,
  urlSetting,
  type SettingValues,
} from '../settings/setting.js';

const optional = { kind: 'default' } as const;

export const telemetrySettings = defineSettings({
  OTEL_EXPORTER_OTLP_ENDPOINT: urlSetting({
    help:
      'An OpenTelemetry collector (OTLP over HTTP, e.g. http://localhost:4318): traces and metrics go there, ' +
      'beside Application Insights in Azure. Empty: no OTLP export.',
    azure: optional,
  }),
  OTEL_EXPORTER_OTLP_PROTOCOL: choiceSetting(['http/protobuf', 'http/json'], {
    default: 'http/protobuf',
    help: 'How OTLP is encoded on the wire.',
    azure: optional,
  }),
  OTEL_SERVICE_NAME: textSetting({
    default: 'memory-chat',
    help: "The service's name on every span and metric (in Azure, the function app's, as the host's telemetry).",
    azure: { kind: 'bicep' },
  }),
  OTEL_METRIC_EXPORT_INTERVAL: intSetting({
    default: 60_000,
    min: 1_000,
    help: 'How often metrics are exported over OTLP, in milliseconds (they are also flushed at shutdown).',
    azure: optional,
  }),
  OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: choiceSetting(['false', 'true'], {
    default: 'false',
    help:
      '"true" puts message text (prompts, answers, tool arguments and results, search queries) on the spans. ' +
      'Off by default: telemetry then carries ids, models, token counts and timings, never what users wrote.',
    azure: optional,
  }),
});

export interface TelemetryConfig {
  serviceName: string;
  /** Application Insights, authenticated with the app's credential (the managed identity in Azure). */
  azureMonitor: { connectionString: string } | undefined;
  otlp: { endpoint: string; protocol: 'http/protobuf' | 'http/json'; metricIntervalMs: number } | undefined;
  captureContent: boolean;
}

export function telemetryConfig(
  values: SettingValues<typeof telemetrySettings>,
  applicationInsightsConnectionString: string | undefined,
): TelemetryConfig {
  const endpoint = values.OTEL_EXPORTER_OTLP_ENDPOINT;
  return {
    serviceName: values.OTEL_SERVICE_NAME,
    azureMonitor: applicationInsightsConnectionString
      ? { connectionString: applicationInsightsConnectionString }
      : undefined,
    otlp:
      endpoint === undefined
        ? undefined
        : {
            endpoint: endpoint.replace(/\/+$/, ''),
            protocol: values.OTEL_EXPORTER_OTLP_PROTOCOL,
            metricIntervalMs: values.OTEL_METRIC_EXPORT_INTERVAL,
          },
    captureContent: values.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT === 'true',
  };
}
