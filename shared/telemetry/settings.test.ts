import { describe, expect, it } from 'vitest';
import { readSettings, settingsOf, SettingProblems, type Environment } from '../settings/setting.js';
import { telemetryConfig, telemetrySettings } from './settings.js';
import { startTelemetry } from './setup.js';

function configOf(env: Environment, insights?: string) {
  const problems = new SettingProblems(settingsOf(telemetrySettings));
  const values = readSettings(telemetrySettings, env, problems);
  problems.throwIfAny();
  return telemetryConfig(values, insights);
}

describe('telemetry settings', () => {
  it('export nothing and capture no text by default', () => {
    expect(configOf({})).toEqual({
      serviceName: 'memory-chat',
      azureMonitor: undefined,
      otlp: undefined,
      captureContent: false,
    });
  });

  it('name OTLP and Azure Monitor exporters, and the content opt-in', () => {
    const config = configOf(
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318/',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
      },
      'InstrumentationKey=00000000-0000-0000-0000-000000000000',
    );
    expect(config.otlp).toEqual({
      endpoint: 'http://127.0.0.1:4318',
      protocol: 'http/json',
      metricIntervalMs: 60_000,
    });
    expect(config.azureMonitor).toEqual({
      connectionString: 'InstrumentationKey=00000000-0000-0000-0000-000000000000',
    });
    expect(config.captureContent).toBe(true);
  });

  it('refuse a protocol OTLP over HTTP does not speak, naming the setting', () => {
    expect(() => configOf({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL/);
    expect(() => configOf({ OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'yes' })).toThrow(
      /OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT/,
    );
  });

  it('start nothing when no exporter is configured', async () => {
    const telemetry = await startTelemetry(configOf({}));
    expect(telemetry.exporters).toBe('none');
    await telemetry.shutdown();
  });
});
