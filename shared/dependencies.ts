// The composition root: builds every dependency once per process from validated configuration. The
// parts that differ between Azure and the local runtime (message broker, durable client, local TLS
// trust) come from a Platform; everything else is the same production code on both.
import type { Agent } from 'node:https';
import { CosmosClient, type Database } from '@azure/cosmos';
import type { InvocationContext } from '@azure/functions';
import { DefaultAzureCredential, getBearerTokenProvider, type TokenCredential } from '@azure/identity';
import { WebPubSubServiceClient } from '@azure/web-pubsub';
import type { AppConfig } from './config.js';
import type { OrchestrationClient } from './durable/orchestration-client.js';
import type { HealthCheck } from './health.js';
import { createLlmGateway, type LlmGateway } from './llm/llm-gateway.js';
import { AZURE_COGNITIVE_SERVICES_SCOPE } from './llm/openai-client-factory.js';
import type { MessagePublisher } from './messaging/message-publisher.js';
import { createCosmosWorkingMemoryStore } from './chat/cosmos-working-memory.js';
import { createCosmosSessionStore, type SessionStore } from './chat/sessions.js';
import { createCosmosTurnStateStore } from './chat/turn-state.js';
import type { TurnServices } from './chat/turn-steps.js';
import { TURN_EVENTS_CONTAINER } from './cosmos/schema.js';
import { createIdentityResolver, type IdentityResolver } from './identity/caller.js';
import { createCosmosTurnEventStore } from './streaming/cosmos-turn-event-store.js';
import type { TurnEventStore, UserEventFeed } from './streaming/ports.js';
import { createWebPubSubEventFeed } from './streaming/web-pubsub-event-feed.js';
import { createWebPubSubEventSink } from './streaming/web-pubsub-event-sink.js';
import { createChatTools } from './tools/index.js';

export interface Dependencies {
  config: AppConfig;
  database: Database;
  publisher: MessagePublisher;
  webPubSub: WebPubSubServiceClient;
  llm: LlmGateway;
  identity: IdentityResolver;
  sessions: SessionStore;
  /** What the chatTurn activities work with (the invocation adds its logger). */
  chatTurn: Omit<TurnServices, 'log'>;
  /** The stored events of turns, read by the SSE relay. */
  turnEvents: TurnEventStore;
  /** Live events of a user (through Web PubSub), followed by the SSE relay. */
  eventFeed: UserEventFeed;
  /** The durable client for this invocation (in Azure it is bound to the function's durableClient input). */
  orchestrations: (context: InvocationContext) => OrchestrationClient;
  healthChecks: (context: InvocationContext) => HealthCheck[];
  close: () => Promise<void>;
}

/** What the hosting platform provides. */
export interface Platform {
  publisher: MessagePublisher;
  orchestrations(context: InvocationContext): OrchestrationClient;
  /** Checks of the platform's own services (broker, orchestration store). */
  healthChecks(context: InvocationContext): HealthCheck[];
  /** Local runtime only: an agent that trusts the local Cosmos DB server's certificate. */
  cosmosAgent?: Agent;
  /** Local runtime only: Web PubSub is reached over plain HTTP on loopback. */
  allowInsecureWebPubSub?: boolean;
  credential: TokenCredential | undefined;
  close(): Promise<void>;
}

export function createDependencies(config: AppConfig, platform: Platform): Dependencies {
  const cosmosClient = new CosmosClient(
    config.cosmos.key !== undefined
      ? { endpoint: config.cosmos.endpoint, key: config.cosmos.key, agent: platform.cosmosAgent }
      : { endpoint: config.cosmos.endpoint, aadCredentials: requireCredential(platform) },
  );
  const database = cosmosClient.database(config.cosmos.databaseId);
  const webPubSub = createWebPubSubClient(config, platform);
  const llm = createLlmGateway(config.llm.connection, {
    maxRetries: config.llm.maxRetries,
    timeoutMs: config.llm.timeoutMs,
    // One credential (and token cache) per process; without a platform credential the gateway makes its own.
    azureAdTokenProvider: platform.credential
      ? getBearerTokenProvider(platform.credential, AZURE_COGNITIVE_SERVICES_SCOPE)
      : undefined,
  });

  const turnEvents = createCosmosTurnEventStore(database.container(TURN_EVENTS_CONTAINER));
  const chatTurn: Omit<TurnServices, 'log'> = {
    workingMemory: createCosmosWorkingMemoryStore(database),
    turns: createCosmosTurnStateStore(database),
    events: turnEvents,
    sink: createWebPubSubEventSink(webPubSub),
    llm,
    tools: createChatTools(),
    publisher: platform.publisher,
    settings: {
      promptTokenBudget: config.chat.promptTokenBudget,
      maxOutputTokens: config.chat.maxOutputTokens,
      coalescing: {
        flushIntervalMs: config.streaming.flushIntervalMs,
        flushMaxChars: config.streaming.flushMaxChars,
      },
    },
  };

  const ownChecks: HealthCheck[] = [
    {
      name: 'cosmos',
      check: async () => {
        await database.read();
        return `database "${config.cosmos.databaseId}" reachable`;
      },
    },
    {
      name: 'webPubSub',
      check: async () => {
        await webPubSub.groupExists('health-probe');
        return `hub "${config.webPubSub.hub}" reachable`;
      },
    },
    {
      name: 'llm',
      check: async () => {
        const probe = await llm.probe();
        if (!probe.ok) throw new Error(probe.detail);
        // An anonymous caller learns that the model answers, not where it is.
        return config.llm.provider === 'offline'
          ? 'offline stand-in model reachable'
          : `${config.llm.provider} endpoint reachable`;
      },
    },
  ];

  return {
    config,
    database,
    publisher: platform.publisher,
    webPubSub,
    llm,
    identity: createIdentityResolver(config.auth),
    sessions: createCosmosSessionStore(database),
    chatTurn,
    turnEvents,
    eventFeed: createWebPubSubEventFeed(webPubSub),
    orchestrations: (context) => platform.orchestrations(context),
    healthChecks: (context) => [...ownChecks, ...platform.healthChecks(context)],
    close: async () => {
      cosmosClient.dispose();
      await platform.close();
    },
  };
}

function createWebPubSubClient(config: AppConfig, platform: Platform): WebPubSubServiceClient {
  const options = { allowInsecureConnection: platform.allowInsecureWebPubSub === true };
  if (config.webPubSub.connectionString !== undefined) {
    return new WebPubSubServiceClient(config.webPubSub.connectionString, config.webPubSub.hub, options);
  }
  const endpoint = config.webPubSub.endpoint ?? '';
  return new WebPubSubServiceClient(endpoint, requireCredential(platform), config.webPubSub.hub, options);
}

function requireCredential(platform: Platform): TokenCredential {
  if (!platform.credential)
    throw new Error('This platform has no Azure credential: configure keys for local use.');
  return platform.credential;
}

/** The Azure credential of the app: its user-assigned managed identity when AZURE_CLIENT_ID is set. */
export function createAzureCredential(config: AppConfig): TokenCredential {
  return new DefaultAzureCredential(
    config.managedIdentityClientId ? { managedIdentityClientId: config.managedIdentityClientId } : {},
  );
}

// One set of dependencies per process, created on first use (never at import time).
let current: Promise<Dependencies> | undefined;
let factory: (() => Promise<Dependencies>) | undefined;

/** Chooses how the process's dependencies are made: the Functions entry and the local runtime call this once. */
export function provideDependencies(make: () => Promise<Dependencies>): void {
  factory = make;
  current = undefined;
}

export function getDependencies(): Promise<Dependencies> {
  if (!factory)
    throw new Error('No dependencies were provided: the entry point must call provideDependencies().');
  current ??= factory().catch((error: unknown) => {
    current = undefined; // a transient start-up failure is retried by the next invocation
    throw error;
  });
  return current;
}
