// Entry point of the Azure Functions host (package.json "main"): checks the settings, then registers
// every definition of the table with app.* / df.app.*.
import { app } from '@azure/functions';
import * as df from 'durable-functions';
import { createAzurePlatform } from '../shared/azure-platform.js';
import { loadConfig } from '../shared/config.js';
import { createDependencies, provideDependencies } from '../shared/dependencies.js';
import { SERVICE_BUS_CONNECTION } from '../shared/resources.js';
import type { FunctionDefinition } from './definition.js';
import { functionDefinitions } from './table.js';

// Fail at load with a message naming each bad setting, rather than on the first request.
const config = loadConfig(process.env);
provideDependencies(() => Promise.resolve(createDependencies(config, createAzurePlatform(config))));

// SSE responses are streamed, not buffered by the host.
app.setup({ enableHttpStream: true });

for (const definition of functionDefinitions) register(definition);

function register(definition: FunctionDefinition): void {
  switch (definition.kind) {
    case 'http':
      app.http(definition.name, {
        route: definition.route,
        methods: definition.methods,
        authLevel: 'anonymous', // identity comes from App Service authentication / Entra ID tokens
        extraInputs: definition.usesDurableClient ? [df.input.durableClient()] : [],
        handler: definition.handler,
      });
      return;
    case 'serviceBus': {
      const extraInputs = definition.usesDurableClient ? [df.input.durableClient()] : [];
      const common = {
        connection: SERVICE_BUS_CONNECTION,
        isSessionsEnabled: definition.isSessionsEnabled,
        extraInputs,
        handler: definition.handler,
      };
      if ('queueName' in definition.source) {
        app.serviceBusQueue(definition.name, { ...common, queueName: definition.source.queueName });
      } else {
        app.serviceBusTopic(definition.name, {
          ...common,
          topicName: definition.source.topicName,
          subscriptionName: definition.source.subscriptionName,
        });
      }
      return;
    }
    case 'orchestration':
      df.app.orchestration(definition.name, definition.handler);
      return;
    case 'activity':
      df.app.activity(definition.name, { handler: definition.handler });
      return;
  }
}
