// A second composition of the app over a running local runtime's services, as a second Functions instance on Azure
// shares the one Cosmos DB, broker and task hub: in-process state of its own (caches, stop signals), the same stores.
import { createApp, type App } from '../shared/app/app.js';
import { createAzureCredential } from '../shared/app/azure-credential.js';
import type { LocalRuntime } from './runtime.js';

export function secondInstance(runtime: LocalRuntime): App {
  return createApp(runtime.config, {
    credential: createAzureCredential(runtime.config),
    cosmosAgent: runtime.cosmos.agent,
    allowInsecureWebPubSub: true,
    fullTextSearch: 'in-process',
    publisher: runtime.serviceBus,
    orchestrations: () => runtime.durable,
    healthChecks: () => [],
    close: () => Promise.resolve(),
  });
}
