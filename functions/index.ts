// Entry point of the Azure Functions host (package.json "main"): checks the settings, provides the app, then
// registers every definition of the table.
import { app } from '@azure/functions';
import { createApp, provideApp } from '../shared/app/app.js';
import { createAzureCredential } from '../shared/app/azure-credential.js';
import { createAzurePlatform } from '../shared/app/azure-platform.js';
import { loadConfig } from '../shared/app/config.js';
import { startTelemetry } from '../shared/telemetry/setup.js';
import { register } from './register.js';
import { functionDefinitions } from './table.js';

// Fail at load with a message naming each bad setting, rather than on the first request.
const config = loadConfig(process.env);
provideApp(() => Promise.resolve(createApp(config, createAzurePlatform(config))));
// Before the first invocation: Application Insights with the managed identity, and OTLP when an endpoint is set.
startTelemetry(config.telemetry, { credential: createAzureCredential(config) }).catch((error: unknown) => {
  console.error('Telemetry could not start; the app runs without it:', error);
});

// SSE responses are streamed, not buffered by the host.
app.setup({ enableHttpStream: true });

for (const definition of functionDefinitions) register(definition);
