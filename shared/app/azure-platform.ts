// The Azure side of the composition root: the managed identity, Service Bus with it, and the durable client
// bound to each invocation's durableClient input.
import type { InvocationContext } from '@azure/functions';
import { ServiceBusClient } from '@azure/service-bus';
import * as df from 'durable-functions';
import { USER_MESSAGES_QUEUE } from '../chat/contracts/queue.js';
import { healthCache } from '../health.js';
import { createDurableFunctionsClient } from '../durable/adapters/durable-functions-client.js';
import { createServiceBusPublisher } from '../messaging/adapters/service-bus-publisher.js';
import type { Platform } from './app.js';
import { createAzureCredential } from './azure-credential.js';
import type { AppConfig } from './config.js';

export function createAzurePlatform(config: AppConfig): Platform {
  const credential = createAzureCredential(config);
  const serviceBus = new ServiceBusClient(config.serviceBus.fullyQualifiedNamespace ?? '', credential);
  const orchestrations = (context: InvocationContext) => createDurableFunctionsClient(df.getClient(context));
  const cached = healthCache(config.health.cacheMs);
  return {
    credential,
    publisher: createServiceBusPublisher({ client: serviceBus }),
    orchestrations,
    // A poll within the cache time reuses the last answer instead of opening a link and reading the task hub.
    healthChecks: (context) =>
      [
        {
          name: 'serviceBus',
          // Opening a sender link proves the namespace answers, the identity is accepted and the queue exists.
          check: async () => {
            const sender = serviceBus.createSender(USER_MESSAGES_QUEUE);
            try {
              await sender.createMessageBatch();
            } finally {
              await sender.close();
            }
            return `queue "${USER_MESSAGES_QUEUE}" reachable`;
          },
        },
        {
          name: 'durable',
          check: async () => {
            await orchestrations(context).getStatus('health-probe');
            return 'task hub reachable';
          },
        },
      ].map(cached),
    close: () => serviceBus.close(),
  };
}
