// The local runtime: the whole product in one process with no Azure account.
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Database } from '@azure/cosmos';
import type { InvocationContext, LogHandler } from '@azure/functions';
import { WebPubSubServiceClient } from '@azure/web-pubsub';
import type { FunctionDefinition } from '../functions/definition.js';
import { functionDefinitions } from '../functions/table.js';
import { createApp, provideApp, type App, type Platform } from '../shared/app/app.js';
import { createAzureCredential } from '../shared/app/azure-credential.js';
import { loadConfig, type AppConfig } from '../shared/app/config.js';
import { clientConfig } from '../shared/identity/client-config.js';
import { cosmosContainers } from '../shared/app/cosmos-containers.js';
import { serviceBusQueues, serviceBusTopics } from '../shared/app/service-bus-entities.js';
import {
  createLocalCosmosClient,
  provisionCosmos,
  startLocalCosmos,
  type LocalCosmos,
} from './cosmos/local-cosmos.js';
import { startLocalBlob, type LocalBlob } from './blob/local-azurite.js';
import { createBlobProxy, LOCAL_BLOB_PATH } from './blob/blob-proxy.js';
import { startLocalTimers } from './timers/timer-host.js';
import { LocalDurableDriver } from './durable/local-durable-driver.js';
import { createAzureLatencyModel, type AzureLatencyModel } from './latency/azure-latency.js';
import { sortFunctions } from './functions-host.js';
import { lockDataFolder } from './persistence/data-folder-lock.js';
import { localSecretsKey } from './persistence/local-secrets-key.js';
import { readHostSettings } from './host-json.js';
import { HttpHost } from './http/http-host.js';
import { createStaticSite } from './http/static-site.js';
import { createStatsEndpoint } from './http/stats-endpoint.js';
import { readLocalStats, type LocalStats } from './local-stats.js';
import {
  createOfflineModel,
  OFFLINE_CHAT_MODEL,
  OFFLINE_EMBEDDING_MODEL,
} from './offline-model/offline-model.js';
import { productVocabulary } from './offline-model-vocabulary.js';
import { attachServiceBusTrigger } from './service-bus/attach-trigger.js';
import { createDeadLetterEndpoint } from './service-bus/dead-letter-endpoint.js';
import {
  LocalServiceBus,
  type LocalServiceBusOptions,
  type MessageSource,
} from './service-bus/local-service-bus.js';
import { parseLocalRuntimeSettings, type LocalRuntimeSettings } from './settings.js';
import { startTelemetry } from '../shared/telemetry/setup.js';
import { LocalWebPubSub } from './web-pubsub/local-web-pubsub.js';

export const WEB_PUBSUB_PATH = '/webpubsub';
export const OFFLINE_MODEL_PATH = '/offline-model/v1';

/**
 * Largest request body the local host accepts: the Functions host's own limit (100 MB, its HTTP trigger's request
 * length limit). Each endpoint's own limit is smaller (a document upload's is KNOWLEDGE_MAX_DOCUMENT_BYTES).
 */
const MAX_REQUEST_BYTES = 100 * 1024 * 1024;
/** History and memory deliveries under way at once while a chat-queue delivery runs (Azure scales them out). */
const BACKGROUND_DELIVERIES_WHILE_TURNS_RUN = 2;

export interface LocalRuntimeOptions {
  /** 0 picks a free port. */
  port: number;
  host?: string;
  /** Where Cosmos DB data is kept across restarts; undefined keeps everything in memory. */
  dataDir: string | undefined;
  /** App settings (process.env and local.settings.json Values); the runtime fills in its local endpoints. */
  settings: Readonly<Record<string, string | undefined>>;
  logHandler: LogHandler;
  serviceBus?: LocalServiceBusOptions;
  /** Defaults to the table the Functions host registers; tests may add definitions of their own. */
  functions?: readonly FunctionDefinition[];
}

export interface LocalRuntime {
  /** Base URL, e.g. http://127.0.0.1:7071 (the API is under /api). */
  url: string;
  config: AppConfig;
  app: App;
  serviceBus: LocalServiceBus;
  durable: LocalDurableDriver;
  webPubSub: LocalWebPubSub;
  cosmos: LocalCosmos;
  /** The local Blob Storage (Azurite) that keeps attachments. */
  blob: LocalBlob;
  /**
   * The real SDK clients, pointed at the local services, for tests, benchmarks and tools that look behind the
   * app (the app itself reaches its data only through its ports).
   */
  clients: { database: Database; webPubSub: WebPubSubServiceClient };
  /** Runs a timer function now, as its interval would (a test need not wait for it). */
  runTimer(name: string): Promise<void>;
  /** What the local services have served since start, as GET /local/stats answers it. */
  stats(): LocalStats;
  /** Exports the telemetry buffered so far (nothing to do unless an exporter is configured). */
  flushTelemetry(): Promise<void>;
  stop(): Promise<void>;
}

export async function startLocalRuntime(options: LocalRuntimeOptions): Promise<LocalRuntime> {
  const functions = sortFunctions(options.functions ?? functionDefinitions);
  const { offlineModel, corsAllowedOrigins, allowedHosts, webRoot, azureLatency, cosmosThread } =
    parseLocalRuntimeSettings(options.settings);
  // host.json's concurrency for the triggers, and the task hub's poll interval for the latency model.
  const hostJson = await readHostSettings();
  const latency: AzureLatencyModel | undefined =
    azureLatency === undefined
      ? undefined
      : createAzureLatencyModel({
          ...azureLatency,
          maxQueuePollingIntervalMs: hostJson.durableTask.maxQueuePollingIntervalMs,
        });
  const host = options.host ?? '127.0.0.1';
  const startedAt = new Date();
  const log = options.logHandler;
  const cleanups: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  };

  const dataFile = (name: string) =>
    options.dataDir === undefined ? undefined : join(options.dataDir, name);

  // Known once the settings are read, after the host listens: the page is not served before then.
  let signInOrigins: readonly string[] = [];
  let ownOrigins: readonly string[] = [];
  try {
    const http = new HttpHost({
      functions: functions.http,
      maxRequestBytes: MAX_REQUEST_BYTES,
      logHandler: log,
      corsAllowedOrigins,
      allowedHosts,
      site: createStaticSite({
        root: webRoot,
        signInOrigins: () => signInOrigins,
        connectOrigins: () => ownOrigins,
      }),
    });
    const address = await http.listen(options.port, host);
    cleanups.push(() => http.close());
    const url = `http://${host}:${address.port}`;

    if (options.dataDir !== undefined) {
      await mkdir(options.dataDir, { recursive: true });
      const lock = await lockDataFolder(options.dataDir);
      cleanups.push(() => lock.release());
    }
    // Azurite starts in its own process while the Cosmos DB server starts here; a failure stops both.
    const blobStarting = startLocalBlob({ host, dataDir: dataFile('blob') });
    const cosmos = await startLocalCosmos({
      dataFile: dataFile('cosmos.json'),
      host,
      thread: cosmosThread,
      ...(latency === undefined ? {} : { latency: latency.options }),
    }).catch(async (error: unknown) => {
      await blobStarting.then(
        (started) => started.stop(),
        () => undefined,
      );
      throw error;
    });
    cleanups.push(() => cosmos.stop());
    const blob = await blobStarting;
    cleanups.push(() => blob.stop());
    // A page uploads large files through the runtime's proxy to the emulator, on the runtime's own origin (the
    // emulator's certificate is trusted by no browser); CORS answers a page here, or at an origin CORS lets call
    // the API. The page's CSP names the runtime's other loopback name, in case the page was opened by it.
    const local = [url, `http://localhost:${address.port}`];
    await blob.allowOrigins([...local, ...corsAllowedOrigins]);
    ownOrigins = local;
    http.mount(createBlobProxy({ origin: new URL(blob.endpoint).origin, agent: blob.agent }));
    const blobPublicEndpoint = `${url}${LOCAL_BLOB_PATH}${new URL(blob.endpoint).pathname}`;

    const webPubSub = new LocalWebPubSub({
      accessKey: randomBytes(32).toString('base64'),
      pathPrefix: WEB_PUBSUB_PATH,
      latency,
    });
    http.mount(webPubSub);
    cleanups.push(() => webPubSub.close());

    // Users' MCP header values are sealed with a key kept beside the data, unless the user gave one.
    const mcpSecretsKey =
      options.settings.MCP_SECRETS_KEY?.trim() || (await localSecretsKey(dataFile('mcp-secrets.key')));
    const config = loadConfig({
      ...localSettings(options.settings, { url, cosmos, webPubSub, blob }),
      MCP_SECRETS_KEY: mcpSecretsKey,
    });
    const entra = clientConfig(config.auth).entra;
    if (entra !== undefined) signInOrigins = [new URL(entra.authority).origin];
    // OTEL_EXPORTER_OTLP_ENDPOINT exports the local runtime's traces and metrics too; stopped (and flushed) last.
    const telemetry = await startTelemetry(config.telemetry, { credential: createAzureCredential(config) });
    cleanups.push(() => telemetry.shutdown());
    if (config.llm.provider === 'offline') {
      http.mount(
        createOfflineModel({
          pathPrefix: OFFLINE_MODEL_PATH,
          ttftMs: offlineModel.ttftMs,
          tokensPerSecond: offlineModel.tokensPerSecond,
          // Its vectors have the length the app's vector indexes are declared with.
          embeddingDimensions: config.llm.embeddingDimensions,
          // The rules answer the product's own formats and tools, by the names the product gives them.
          vocabulary: productVocabulary,
        }),
      );
    }

    const cosmosClient = createLocalCosmosClient(cosmos);
    cleanups.push(() => Promise.resolve(cosmosClient.dispose()));
    await provisionCosmos(cosmosClient, config.cosmos.databaseId, cosmosContainers);
    const clients = {
      database: cosmosClient.database(config.cosmos.databaseId),
      webPubSub: new WebPubSubServiceClient(webPubSub.connectionString(url), config.webPubSub.hub, {
        allowInsecureConnection: true,
      }),
    };

    const serviceBus = await LocalServiceBus.open({
      // One event loop serves everything here: running turns go first, background jobs catch up (DeliveryGate).
      maxBackgroundWhileBusy: BACKGROUND_DELIVERIES_WHILE_TURNS_RUN,
      ...options.serviceBus,
      latency,
      dataFile: dataFile('service-bus.json'),
      queues: serviceBusQueues,
      topics: serviceBusTopics,
      onSaveError: (error) => log('error', 'Local Service Bus: a save of its data file failed', error),
    });
    cleanups.push(() => serviceBus.close());
    const sources = serviceBusSources();
    http.mount(createDeadLetterEndpoint(serviceBus, sources));

    // open() resumes unfinished orchestrations on a later tick; their activities call getApp(), which
    // is provided below without any await in between.
    const durable = await LocalDurableDriver.open(
      { orchestrations: functions.orchestrations, activities: functions.activities },
      { logHandler: log, dataFile: dataFile('durable.json'), latency },
    );

    const platform: Platform = {
      // Used only when the configured LLM is Azure OpenAI without a key: the developer's `az login`.
      credential: createAzureCredential(config),
      cosmosAgent: cosmos.agent,
      localBlob: { credential: blob.credential, agent: blob.agent, publicEndpoint: blobPublicEndpoint },
      allowInsecureWebPubSub: true,
      fullTextSearch: 'in-process',
      publisher: serviceBus,
      orchestrations: (_context: InvocationContext) => durable,
      healthChecks: () => [
        {
          name: 'serviceBus',
          check: () => {
            const deadLettered = sources.reduce(
              (sum, source) => sum + serviceBus.deadLetters(source).length,
              0,
            );
            return Promise.resolve(
              `in-process broker: ${sources.length} entities, ${deadLettered} dead-lettered`,
            );
          },
        },
        {
          name: 'durable',
          check: async () => {
            await durable.getStatus('health-probe');
            return 'local orchestration driver running';
          },
        },
        // Whether the local services answer as late as Azure's would, since every measure taken here depends on it.
        {
          name: 'localLatency',
          check: () => Promise.resolve(latencyLabel(azureLatency)),
        },
      ],
      close: () => Promise.resolve(),
    };
    const stats = () => readLocalStats({ cosmos, serviceBus, webPubSub, taskHub: durable }, startedAt);
    http.mount(createStatsEndpoint(stats));
    const app = createApp(config, platform);
    provideApp(() => Promise.resolve(app));
    cleanups.push(() => app.close());
    // Running activities still use the dependencies: the driver stops before they are closed.
    cleanups.push(() => durable.close());

    // Triggers start last, once everything they call is in place; they stop first. They take host.json's
    // concurrency, as the Functions host does.
    for (const definition of functions.serviceBus) {
      const detach = attachServiceBusTrigger(serviceBus, {
        functionName: definition.name,
        source: definition.source,
        isSessionsEnabled: definition.isSessionsEnabled,
        handler: definition.handler,
        logHandler: log,
        maxConcurrentSessions: hostJson.serviceBus.maxConcurrentSessions,
        maxConcurrentCalls: hostJson.serviceBus.maxConcurrentCalls,
      });
      cleanups.push(detach);
    }
    const timers = startLocalTimers(functions.timers, log);
    cleanups.push(() => timers.stop());
    http.markReady();
    // Cleanups run last-in first-out: new requests are refused before anything behind them stops.
    cleanups.push(() => {
      http.markUnavailable();
      return Promise.resolve();
    });

    return {
      url,
      config,
      app,
      serviceBus,
      durable,
      webPubSub,
      cosmos,
      blob,
      clients,
      runTimer: (name) => timers.run(name),
      stats,
      flushTelemetry: () => telemetry.flush(),
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/**
 * The app's settings for the local runtime: APP_ENV=local, the local services' endpoints and keys, and
 * the offline model unless the user configured another LLM. Everything else is the user's.
 */
function localSettings(
  settings: Readonly<Record<string, string | undefined>>,
  local: { url: string; cosmos: LocalCosmos; webPubSub: LocalWebPubSub; blob: LocalBlob },
): Record<string, string | undefined> {
  const merged: Record<string, string | undefined> = {
    ...settings,
    APP_ENV: 'local',
    COSMOS_ENDPOINT: local.cosmos.endpoint,
    COSMOS_KEY: local.cosmos.key,
    WEBPUBSUB_CONNECTION_STRING: local.webPubSub.connectionString(local.url),
    WEBPUBSUB_ENDPOINT: undefined,
    ATTACHMENTS_BLOB_ENDPOINT: local.blob.endpoint,
    ATTACHMENTS_STORAGE_CONNECTION_STRING: undefined,
    ServiceBusConnection__fullyQualifiedNamespace: undefined,
  };
  // Blank counts as unset, as everywhere in settings: a copied local.settings.sample.json leaves it empty.
  if ((merged.LLM_PROVIDER?.trim() || 'offline') === 'offline') {
    Object.assign(merged, {
      LLM_PROVIDER: 'offline',
      LLM_BASE_URL: `${local.url}${OFFLINE_MODEL_PATH}`,
      LLM_API_KEY: undefined,
      LLM_CHAT_MODEL: OFFLINE_CHAT_MODEL,
      LLM_EMBEDDING_MODEL: OFFLINE_EMBEDDING_MODEL,
    });
  }
  return merged;
}

/** What LOCAL_AZURE_LATENCY makes of the local services, as the start banner and the health report say it. */
export function latencyLabel(azureLatency: LocalRuntimeSettings['azureLatency']): string {
  return azureLatency === undefined
    ? 'LOCAL_AZURE_LATENCY=off: the local services answer at once'
    : `LOCAL_AZURE_LATENCY=azure: the local services answer as late as Azure's (seed ${azureLatency.seed}, ` +
        `task hub ${azureLatency.taskHub})`;
}

/** Every queue and topic subscription the app declares. */
function serviceBusSources(): MessageSource[] {
  return [
    ...serviceBusQueues.map((queue) => ({ queueName: queue.name })),
    ...serviceBusTopics.flatMap((topic) =>
      topic.subscriptions.map((sub) => ({ topicName: topic.name, subscriptionName: sub.name })),
    ),
  ];
}
