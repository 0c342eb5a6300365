// Entry point of the Azure Functions host (package.json "main"): checks the settings, provides the app, then
// registers every definition of the table.
import { app } from '@azure/functions';
import { createApp, provideApp } from '../shared/app/app.js';
import { createAzurePlatform } from '../shared/app/azure-platform.js';
import { loadConfig } from '../shared/app/config.js';
import { register } from './register.js';
import { functionDefinitions } from './table.js';

// Fail at load with a message naming each bad setting, rather than on the first request.
const config = loadConfig(process.env);
provideApp(() => Promise.resolve(createApp(config, createAzurePlatform(config))));

// SSE responses are streamed, not buffered by the host.
app.setup({ enableHttpStream: true });

for (const definition of functionDefinitions) register(definition);
