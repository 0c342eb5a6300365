// What the local services have served since the runtime started, in the units Azure bills them: Cosmos DB requests
// and request units, Service Bus operations, Web PubSub messages, task-hub work. GET /local/stats and bench/ read it.
import type { LocalCosmosStats } from './cosmos/local-cosmos.js';
import type { TaskHubEvents } from './durable/local-durable-driver.js';
import type { ServiceBusOperations } from './service-bus/local-service-bus.js';

/** The services' own counters: what each one counts as it serves. */
export interface LocalStatsSources {
  cosmos: { stats(): LocalCosmosStats };
  serviceBus: { stats(): ServiceBusOperations };
  webPubSub: {
    stats(): {
      connections: number;
      restCalls: number;
      deliveredMessages: number;
      deliveredMessageUnits: number;
    };
  };
  taskHub: { stats(): TaskHubEvents };
}

export interface LocalStats {
  /** When the counters started: the runtime's start (a benchmark's resetStats() zeroes them without moving it). */
  since: string;
  cosmos: {
    requests: number;
    /** As Azure Cosmos DB would charge them, and as the server answered them in x-ms-request-charge. */
    requestUnits: number;
    requestBytes: number;
    responseBytes: number;
    /** `<resource>.<verb>`: `item.create`, `item.read`, `item.query`, ... */
    byOperation: Record<string, number>;
    /** `<container> <resource>.<verb>`, with bytes and request units. */
    byContainer: Record<string, { requests: number; bytes: number; requestUnits: number }>;
  };
  /** `operations` is what Service Bus Standard bills: the sum of the counts beside it. */
  serviceBus: ServiceBusOperations & { operations: number };
  webPubSub: {
    /** Messages delivered to client connections, and their 2 KB units: what Web PubSub bills. */
    messages: number;
    messageUnits: number;
    /** Calls of the REST API (sends, group and connection management, token checks). */
    restCalls: number;
    /** Client connections open now. */
    connections: number;
  };
  /** `operations` counts as the Durable Task Scheduler bills actions: a start 1, an activity 2, a timer or event 1. */
  taskHub: TaskHubEvents & { operations: number };
}

export function readLocalStats(sources: LocalStatsSources, since: Date): LocalStats {
  const cosmos = sources.cosmos.stats();
  const bus = sources.serviceBus.stats();
  const pubSub = sources.webPubSub.stats();
  const hub = sources.taskHub.stats();
  return {
    since: since.toISOString(),
    cosmos: {
      requests: cosmos.requests,
      requestUnits: Math.round(cosmos.requestUnits * 100) / 100,
      requestBytes: cosmos.requestBytes,
      responseBytes: cosmos.responseBytes,
      byOperation: cosmos.byOperation,
      byContainer: cosmos.byContainer,
    },
    serviceBus: {
      operations:
        bus.sends + bus.sessionAccepts + bus.receives + bus.completes + bus.abandons + bus.deadLetters,
      ...bus,
    },
    webPubSub: {
      messages: pubSub.deliveredMessages,
      messageUnits: pubSub.deliveredMessageUnits,
      restCalls: pubSub.restCalls,
      connections: pubSub.connections,
    },
    taskHub: {
      operations: hub.orchestrationStarts + 2 * hub.activities + hub.timersFired + hub.eventsRaised,
      ...hub,
    },
  };
}
