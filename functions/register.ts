// Registers the function table with the Functions host: app.* for triggers, df.app.* for the Durable side.
// One case per kind of definition (functions/definition.ts).
import { app } from '@azure/functions';
import * as df from 'durable-functions';
import { SERVICE_BUS_CONNECTION } from '../shared/messaging/service-bus-entities.js';
import type { FunctionDefinition } from './definition.js';

export function register(definition: FunctionDefinition): void {
  const extraInputs =
    'usesDurableClient' in definition && definition.usesDurableClient ? [df.input.durableClient()] : [];
  switch (definition.kind) {
    case 'http':
      app.http(definition.name, {
        route: definition.route,
        methods: definition.methods,
        authLevel: 'anonymous', // identity comes from App Service authentication / Entra ID tokens
        extraInputs,
        handler: definition.handler,
      });
      return;
    case 'serviceBus': {
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
    case 'timer':
      app.timer(definition.name, { schedule: definition.schedule, handler: definition.handler });
      return;
    case 'orchestration':
      df.app.orchestration(definition.name, definition.handler);
      return;
    case 'activity':
      df.app.activity(definition.name, { handler: definition.handler, extraInputs });
      return;
    default:
      return unknownKind(definition);
  }
}

function unknownKind(definition: never): never {
  throw new Error(`No registration for the function definition ${JSON.stringify(definition)}.`);
}
