// The composition root: builds the app once per process from validated configuration, composing each area's
// adapters over the shared clients and the one Azure credential; what differs between Azure and the local runtime
// comes from a Platform. Triggers get use-case services from here, never an SDK client.
import type { Agent } from 'node:https';
import type { InvocationContext } from '@azure/functions';
import type { TokenCredential } from '@azure/identity';
import { createChatStores } from '../chat/adapters/chat-adapters.js';
import type { PostedMessageStore } from '../conversation/posted-message-store.js';
import type { SessionStore } from '../conversation/session-store.js';
import { TurnCancelSignals } from '../chat/cancellation/turn-cancel-signals.js';
import type { TurnServices } from '../chat/turn/turn-services.js';
import { SESSIONS_CONTAINER } from '../chat/contracts/documents.js';
import { createCosmosStreamTicketStore } from '../chat/adapters/cosmos-posted-message-store.js';
import type { WorkingMemoryStore } from '../conversation/working-memory-store.js';
import type { OrchestrationClient } from '../durable/orchestration-client.js';
import type { HealthCheck } from '../health.js';
import type { HistoryWorkerServices } from '../history/persist-turn.js';
import { createHistoryStores } from '../history/adapters/history-adapters.js';
import type { ConversationEraser } from '../history/conversation-eraser.js';
import type { ConversationHeaders } from '../history/conversation-headers.js';
import type { ConversationMessages } from '../history/conversation-messages.js';
import type { SessionMemory } from '../history/session-memory.js';
import type { IdentityResolver } from '../identity/caller.js';
import { createIdentityResolver } from '../identity/identity-resolver.js';
import { createKnowledgeStores } from '../knowledge/adapters/knowledge-adapters.js';
import { createDocumentReader, type DocumentReader } from '../knowledge/extract-pool.js';
import type { KnowledgeChunks } from '../knowledge/knowledge-chunks.js';
import type { KnowledgeDocuments } from '../knowledge/knowledge-documents.js';
import type { KnowledgeUploads } from '../knowledge/knowledge-uploads.js';
import { searchKnowledge, type KnowledgeSearchServices } from '../knowledge/search-knowledge.js';
import type { KnowledgeConfig } from '../knowledge/settings.js';
import type { LlmGateway } from '../llm/llm-gateway.js';
import type { McpServices } from '../mcp/mcp-servers.js';
import { traceLlmGateway } from '../llm/traced-llm-gateway.js';
import { composeAccount, type AccountServices } from './account-wiring.js';
import { composeApiKeys, type ApiKeyWiring } from './api-key-wiring.js';
import { createMemoryStores } from '../memory/adapters/memory-adapters.js';
import { createWebPubSubMemoryNotices } from '../memory/adapters/web-pubsub-memory-notices.js';
import type { RememberServices } from '../memory/remember-turn.js';
import type { ConversationSummaries } from '../memory/conversation-summaries.js';
import type { ProfileFacts } from '../memory/profile-facts.js';
import { searchConversations, type ConversationSearchServices } from '../memory/search-conversations.js';
import type { MessagePublisher } from '../messaging/message-publisher.js';
import { tracePublisher } from '../messaging/traced-publisher.js';
import type { QuotaServices } from '../quota/quota-gate.js';
import type { SearchQuota } from '../quota/search-rate.js';
import type { ShareStore } from '../sharing/share-store.js';
import { createStreamingAdapters } from '../streaming/adapters/streaming-adapters.js';
import type { ClientAccessIssuer } from '../streaming/client-access.js';
import { OpenStreams } from '../streaming/open-streams.js';
import type { StreamTicketStore } from '../streaming/stream-tickets.js';
import { traceEventSink, traceEventStore } from '../streaming/traced-streaming.js';
import { traceMethods } from '../telemetry/spans.js';
import type { TurnEventStore } from '../streaming/turn-event-store.js';
import type { UserEventFeed } from '../streaming/user-event-feed.js';
import { createChatTools } from '../tools/index.js';
import type { UsageLedger } from '../usage/usage-ledger.js';
import { spendGatedLlm } from '../usage/spend-gated-llm.js';
import type { AppConfig } from './config.js';
import { appHealthChecks } from './health-checks.js';
import { hotStoreOpener } from './hot-store-opener.js';
import { composeUsageAccounting, usageServices, type UsageServices } from './usage-accounting.js';
import { composeEraser } from './conversation-eraser.js';
import { composeMcp } from './mcp-wiring.js';
import { composeQuota } from './quota-wiring.js';
import { composeAttachments, turnAttachments, type BlobPlatform } from './attachment-services.js';
import type { DirectUploadServices } from '../attachments/direct-uploads.js';
import { composeWorkspace, conversationInstructions, type WorkspaceServices } from './workspace.js';
import { createCosmosClient, createLlm, createWebPubSubClient } from './service-clients.js';

export interface ChatServices {
  sessions: SessionStore;
  /** The messages accepted in each session, so a re-post is recognised. */
  posted: PostedMessageStore;
  publisher: MessagePublisher;
  /** Stops asked for by turns' owners: recorded for every instance, and signalled to streams open in this one. */
  cancellations: TurnCancelSignals;
  /** What the chatTurn activities work with (the invocation adds its logger). */
  turn: Omit<TurnServices, 'log'>;
}

export interface StreamingServices {
  /** The stored events of turns, read by the SSE relay. */
  turnEvents: TurnEventStore;
  /** Live events of a user (through Web PubSub), followed by the SSE relay. */
  feed: UserEventFeed;
  /** Web PubSub client URLs for GET /api/realtime/negotiate. */
  clientAccess: ClientAccessIssuer;
  /** Tickets that open one turn's stream without headers (POST /api/chat gives them). */
  tickets: StreamTicketStore;
  /** The SSE streams open in this instance, by user (STREAMS_PER_USER). */
  openStreams: OpenStreams;
}

export interface HistoryServices {
  /** What the history worker persists a finished turn with (the invocation gives its logger). */
  worker: HistoryWorkerServices;
  /** One small header per conversation: the list, titles, counts, totals. */
  headers: ConversationHeaders;
  /** One item per message kept long-term. */
  messages: ConversationMessages;
  /** Exchange index entries and the rolling digest (beside the messages). */
  sessionMemory: SessionMemory;
  /** The conversation API reads the committed messages the history worker has not stored yet from here. */
  workingMemory: WorkingMemoryStore;
  /** Deleting a conversation marks, then removes, its session. */
  sessions: SessionStore;
  /** What a deleted conversation left outside history's containers. */
  eraser: ConversationEraser;
  /** Each conversation's usage counter: its cost in the conversation's summary. */
  usage: UsageLedger;
}

export interface MemoryServices {
  /** What the memory worker consolidates a finished turn with (the invocation gives its logger). */
  worker: RememberServices;
  /** One summary per past conversation, with its embedding: what conversation search ranks. */
  summaries: ConversationSummaries;
  /** The user's profile, one item per fact, and the record of what each turn changed in it. */
  facts: ProfileFacts;
  /** What conversation search runs on, composed once for the chat's tool, the REST API and MCP. */
  search: ConversationSearchServices;
}

export interface KnowledgeServices {
  /** One record per document, with its status: what the API lists and what search checks is ready. */
  documents: KnowledgeDocuments;
  /** The documents' chunks with their embeddings: what knowledge search ranks. */
  chunks: KnowledgeChunks;
  /** An upload's bytes, until the ingestion worker has indexed the document. */
  uploads: KnowledgeUploads;
  /** The worker threads that read uploaded documents, off the serving thread. */
  reader: DocumentReader;
  /** Queues uploaded documents for the ingestion worker. */
  publisher: MessagePublisher;
  /** The ingestion worker's embeddings. */
  llm: LlmGateway;
  settings: KnowledgeConfig;
  /** What knowledge search runs on, composed once for the REST API and the chat's tool. */
  search: KnowledgeSearchServices;
}

/** Everything a trigger may call: per-area services over ports, the caller's identity, and health. */
export interface App {
  config: AppConfig;
  identity: IdentityResolver;
  /** Personal API keys: their store and use-cases' services, and the verifier of presented keys. */
  apiKeys: ApiKeyWiring;
  chat: ChatServices;
  streaming: StreamingServices;
  history: HistoryServices;
  memory: MemoryServices;
  account: AccountServices;
  knowledge: KnowledgeServices;
  /** Files attached to messages: their store (Blob), checks and limits. */
  attachments: DirectUploadServices;
  /**
   * Per-user quotas, their state shared by every instance in Cosmos DB. `usage` reads what users spent (tokens,
   * dollars) for the daily and monthly limits; `searches` counts searches per minute.
   */
  quota: QuotaServices & SearchQuota;
  usage: UsageServices;
  /** Shared snapshots and each owner's links. */
  sharing: { shares: ShareStore };
  /** Users' and the operator's MCP servers, and the client that reaches them. */
  mcp: McpServices;
  /** Assistants and projects, which shape conversations. */
  workspace: WorkspaceServices;
  /** The durable client for this invocation (in Azure it is bound to the function's durableClient input). */
  orchestrations(context: InvocationContext): OrchestrationClient;
  healthChecks(context: InvocationContext): HealthCheck[];
  close(): Promise<void>;
}

/** What the hosting platform provides. */
export interface Platform extends BlobPlatform {
  /** The app's one Azure credential: its managed identity in Azure, the developer's `az login` locally. */
  credential: TokenCredential;
  publisher: MessagePublisher;
  orchestrations(context: InvocationContext): OrchestrationClient;
  /** Checks of the platform's own services (broker, orchestration store). */
  healthChecks(context: InvocationContext): HealthCheck[];
  /** Local runtime only: an agent that trusts the local Cosmos DB server's certificate. */
  cosmosAgent?: Agent;
  /** Local runtime only: Web PubSub is reached over plain HTTP on loopback. */
  allowInsecureWebPubSub?: boolean;
  /**
   * Local runtime only: the local Cosmos DB server has no full-text or vector search, so history search matches
   * words and memory search ranks summaries in process (the same results); in Azure Cosmos DB does both.
   */
  fullTextSearch?: 'in-process';
  close(): Promise<void>;
}

export function createApp(config: AppConfig, platform: Platform): App {
  // Chosen before any client is made: a hot store this build cannot open stops start-up at once.
  const openHotStore = hotStoreOpener(config, platform.credential);
  const cosmosClient = createCosmosClient(config, platform.credential, platform.cosmosAgent);
  const database = cosmosClient.database(config.cosmos.databaseId);
  const webPubSub = createWebPubSubClient(
    config,
    platform.credential,
    platform.allowInsecureWebPubSub === true,
  );
  // Every model call made inside a job's usage scope is recorded once, with its tokens and cost.
  const usage = composeUsageAccounting(config, database, createLlm(config, platform.credential));
  // Every model call is a GenAI span and feeds the GenAI metrics; every published message carries the trace.
  const llm = traceLlmGateway(usage.llm, config.llm.connection, {
    captureContent: config.telemetry.captureContent,
  });
  const publisher = tracePublisher(platform.publisher);

  // Full-text search runs in Cosmos DB in Azure; the local server lacks it, so the platform has it matched in process.
  const history = createHistoryStores(database, { fullText: platform.fullTextSearch ?? 'cosmos' });
  const hotStore = openHotStore(database);
  const hot = hotStore.store;
  const stores = createChatStores(database, {
    hot,
    tailBytes: hotStore.workingMemoryTailBytes,
    chat: config.chat,
    history: { headers: history.headers, messages: history.messages },
  });
  const streaming = createStreamingAdapters(database, webPubSub);
  // One per process: a stop taken here aborts the turn's model stream at once if it is open in this process; a
  // stream open elsewhere finds the stop's record, or its conversation's tombstone, by its poll.
  const cancellations = new TurnCancelSignals(stores.cancellations, {
    pollIntervalMs: config.chat.cancelPollMs,
    isDeleted: (ref) => stores.sessions.isDeleted(ref.userId, ref.sessionId),
  });
  // What a deleted conversation leaves outside history: its turns' data, its spend's ties, its share links.
  const quota = composeQuota(config, database, usage);
  const attachments = composeAttachments(config, platform, quota.state);
  const { eraser, shares } = composeEraser(database, hot, usage, attachments.store);
  // Hybrid search (RRF of VectorDistance and FullTextScore) runs in Cosmos DB in Azure; locally, in process.
  const memory = createMemoryStores(database, { ranking: platform.fullTextSearch ?? 'cosmos' });
  const search: ConversationSearchServices = {
    summaries: memory.summaries,
    headers: history.headers,
    llm,
    relevance: config.search,
  };
  // Knowledge search ranks in Cosmos DB in Azure, in process locally, like memory search.
  const knowledge = createKnowledgeStores(database, { ranking: platform.fullTextSearch ?? 'cosmos' });
  const knowledgeSearch: KnowledgeSearchServices = {
    chunks: knowledge.chunks,
    llm,
    relevance: config.search,
  };
  // Workers start with the first document, not with the app.
  const reader = createDocumentReader(config.knowledge.reading);

  const mcp = composeMcp(config, database);
  // The background workers' model calls are checked against the same spend limits as the turns that caused them.
  const backgroundLlm = spendGatedLlm(llm, quota);
  const workspace = composeWorkspace(database, config);
  const apiKeys = composeApiKeys(config, database);
  const ownChecks = appHealthChecks(config, { database, webPubSub, llm, hotStore: hotStore.checks });

  return {
    config,
    identity: createIdentityResolver(config.auth, { apiKeys: apiKeys.verifier }),
    apiKeys,
    chat: {
      sessions: stores.sessions,
      posted: stores.posted,
      publisher,
      cancellations,
      turn: {
        workingMemory: stores.workingMemory,
        turns: stores.turns,
        events: traceEventStore(streaming.turnEvents),
        sink: traceEventSink(streaming.sink),
        llm,
        attachments: turnAttachments(attachments, reader, config, llm),
        tools: createChatTools(
          {
            messages: history.messages,
            sessionMemory: history.sessionMemory,
            workingMemory: stores.workingMemory,
            searchConversations: (userId, query, limit, options) =>
              searchConversations(search, userId, query, limit, options),
            searchKnowledge: (...args) => searchKnowledge(knowledgeSearch, ...args),
          },
          { captureContent: config.telemetry.captureContent },
        ),
        userTools: mcp.turnTools,
        publisher,
        headers: history.headers,
        sessions: stores.sessions,
        eraser,
        sessionMemory: history.sessionMemory,
        profile: memory.facts,
        cancellation: cancellations,
        quota,
        approvalMarks: { sessions: stores.sessions, posted: stores.posted },
        settings: {
          promptTokenBudget: config.chat.promptTokenBudget,
          maxOutputTokens: config.chat.maxOutputTokens,
          coalescing: {
            flushIntervalMs: config.streaming.flushIntervalMs,
            flushMaxChars: config.streaming.flushMaxChars,
          },
          profileTimeoutMs: config.chat.profileTimeoutMs,
          attachments: config.attachments,
        },
        pricing: usage.pricing,
        instructions: conversationInstructions(workspace),
      },
    },
    streaming: {
      turnEvents: streaming.turnEvents,
      feed: streaming.feed,
      clientAccess: streaming.clientAccess,
      tickets: createCosmosStreamTicketStore(database.container(SESSIONS_CONTAINER)),
      openStreams: new OpenStreams(config.streaming.streamsPerUser),
    },
    history: {
      worker: {
        headers: history.headers,
        messages: history.messages,
        sessionMemory: history.sessionMemory,
        llm: backgroundLlm,
        workingMemory: stores.workingMemory,
        sessions: stores.sessions,
        settings: { promptTokenBudget: config.chat.promptTokenBudget },
      },
      headers: history.headers,
      messages: history.messages,
      sessionMemory: history.sessionMemory,
      workingMemory: stores.workingMemory,
      sessions: stores.sessions,
      eraser,
      usage: usage.ledger,
    },
    memory: {
      worker: {
        summaries: traceMethods(memory.summaries, ['put'], 'memory.write', { 'chat.memory.kind': 'summary' }),
        facts: traceMethods(
          memory.facts,
          ['put', 'createConsolidation', 'markApplied', 'setChanges'],
          'memory.write',
          { 'chat.memory.kind': 'profile' },
        ),
        llm: backgroundLlm,
        sessions: stores.sessions,
        notices: createWebPubSubMemoryNotices(webPubSub),
      },
      summaries: memory.summaries,
      facts: memory.facts,
      search,
    },
    knowledge: {
      documents: knowledge.documents,
      chunks: knowledge.chunks,
      uploads: knowledge.uploads,
      reader,
      publisher,
      llm,
      settings: config.knowledge,
      search: knowledgeSearch,
    },
    attachments,
    account: composeAccount(config, platform, database),
    quota,
    usage: usageServices(usage, config.usage.prices),
    sharing: { shares },
    mcp,
    workspace,
    orchestrations: (context) => platform.orchestrations(context),
    healthChecks: (context) => [...ownChecks, ...platform.healthChecks(context)],
    close: async () => {
      await reader.close();
      await streaming.close();
      await hotStore.close();
      cosmosClient.dispose();
      await platform.close();
    },
  };
}

// One app per process, created on first use (never at import time).
let current: Promise<App> | undefined;
let factory: (() => Promise<App>) | undefined;

/** Chooses how the process's app is made: the Functions entry and the local runtime call this once. */
export function provideApp(make: () => Promise<App>): void {
  factory = make;
  current = undefined;
}

export function getApp(): Promise<App> {
  if (!factory) throw new Error('No app was provided: the entry point must call provideApp().');
  current ??= factory().catch((error: unknown) => {
    current = undefined; // a transient start-up failure is retried by the next invocation
    throw error;
  });
  return current;
}
