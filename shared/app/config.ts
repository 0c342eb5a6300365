// The app's configuration: every settings group the app reads, parsed once at start-up. A missing or malformed
// setting stops start-up with one error that names each bad setting and says how to fix it.
import { chatConfig, chatSettings, type ChatConfig } from '../chat/settings.js';
import { hotStoreConfig, hotStoreSettings, type HotStoreConfig } from '../conversation/settings.js';
import { redisConfig, redisSettings, type RedisConfig } from '../conversation/redis-settings.js';
import { authConfig, identitySettings, type AuthConfig } from '../identity/settings.js';
import { attachmentConfig, attachmentSettings, type AttachmentConfig } from '../attachments/settings.js';
import { knowledgeConfig, knowledgeSettings, type KnowledgeConfig } from '../knowledge/settings.js';
import { llmConfig, llmSettings, type LlmConfig } from '../llm/settings.js';
import { mcpConfig, mcpSettings, type McpConfig } from '../mcp/settings.js';
import type { ModelCatalogue } from '../models/model-catalogue.js';
import type { PriceTable } from '../usage/prices.js';
import { modelCatalogue, modelSettings } from '../models/settings.js';
import { accountConfig, accountSettings, type AccountConfig } from '../account/settings.js';
import { assistantSettings, publishPolicy, type PublishPolicy } from '../assistants/settings.js';
import { apiKeySettings, apiKeysConfig, type ApiKeysConfig } from '../api-keys/settings.js';
import {
  readSettings,
  settingsOf,
  SettingProblems,
  type Environment,
  type Setting,
} from '../settings/setting.js';
import type { Relevance } from '../search/relevance.js';
import { quotaConfig, quotaSettings, type QuotaConfig } from '../quota/settings.js';
import { searchesPerMinute, searchRateSettings } from '../quota/search-rate.js';
import { searchRelevance, searchSettings } from '../search/settings.js';
import { sharingConfig, sharingSettings, type SharingConfig } from '../sharing/settings.js';
import { streamingConfig, streamingSettings, type StreamingConfig } from '../streaming/settings.js';
import { telemetryConfig, telemetrySettings, type TelemetryConfig } from '../telemetry/settings.js';
import { usageConfig, usageSettings, type UsageConfig } from '../usage/settings.js';
import { hostSettings, platformSettings } from './settings.js';

export type AppEnvironment = 'local' | 'azure';

export interface AppConfig {
  env: AppEnvironment;
  /** Client id of the user-assigned managed identity (Azure); undefined = the default credential chain. */
  managedIdentityClientId: string | undefined;
  cosmos: { endpoint: string; databaseId: string; key: string | undefined };
  serviceBus: { fullyQualifiedNamespace: string | undefined };
  webPubSub: { hub: string; endpoint: string | undefined; connectionString: string | undefined };
  llm: LlmConfig;
  /** The chat models conversations may choose (LLM_MODELS); the first is the default. */
  models: ModelCatalogue;
  /** Who may make an assistant public. */
  assistants: { publishers: PublishPolicy };
  auth: AuthConfig;
  /** Whether users may hold personal API keys, how many, and how long an instance trusts one it checked. */
  apiKeys: ApiKeysConfig;
  chat: ChatConfig;
  /** Which adapter holds working memory and running turns. */
  hotStore: HotStoreConfig;
  /** Where Redis is, when it is the hot store. */
  redis: RedisConfig;
  streaming: StreamingConfig;
  knowledge: KnowledgeConfig;
  attachments: AttachmentConfig;
  /** What earns a search hit its place (knowledge and conversation search). */
  search: Relevance;
  /** The price table, and whether model calls are recorded. */
  usage: UsageConfig;
  /** How long GET /api/health keeps a dependency's last answer. */
  health: { cacheMs: number };
  /** Where traces and metrics go, and whether message text may go with them. */
  telemetry: TelemetryConfig;
  /** Per-user quotas and rate limits (all off unless set). */
  quota: QuotaConfig;
  /** Searches one user may make per minute (0: no limit). */
  searchesPerMinute: number;
  /** Whether conversations may be shared by link, and where the shared page lives. */
  sharing: SharingConfig;
  /** The operator's MCP servers, the key that seals users' header values, and the limits of MCP tools. */
  mcp: McpConfig;
  /** Data archives' lifetime and links; what an erase does with usage records. */
  account: AccountConfig;
}

/** Every setting the app and its host read, grouped by area, in the order local.settings.sample.json lists them. */
export const appSettings: readonly Setting<unknown>[] = settingsOf(
  hostSettings,
  platformSettings,
  identitySettings,
  apiKeySettings,
  llmSettings,
  modelSettings,
  assistantSettings,
  chatSettings,
  hotStoreSettings,
  redisSettings,
  streamingSettings,
  knowledgeSettings,
  attachmentSettings,
  searchSettings,
  telemetrySettings,
  quotaSettings,
  searchRateSettings,
  usageSettings,
  sharingSettings,
  mcpSettings,
  accountSettings,
);

/** Parses the settings from an environment (process.env in production). Throws ConfigError. */
export function loadConfig(env: Environment): AppConfig {
  const problems = new SettingProblems(appSettings);
  const platform = readSettings(platformSettings, env, problems);
  const identity = readSettings(identitySettings, env, problems);
  const apiKeys = readSettings(apiKeySettings, env, problems);
  const llm = readSettings(llmSettings, env, problems);
  const modelValues = readSettings(modelSettings, env, problems);
  const assistantValues = readSettings(assistantSettings, env, problems);
  const chat = readSettings(chatSettings, env, problems);
  const hotStore = readSettings(hotStoreSettings, env, problems);
  const redis = readSettings(redisSettings, env, problems);
  const streaming = readSettings(streamingSettings, env, problems);
  const knowledge = readSettings(knowledgeSettings, env, problems);
  const attachments = readSettings(attachmentSettings, env, problems);
  const search = readSettings(searchSettings, env, problems);
  const telemetry = readSettings(telemetrySettings, env, problems);
  // The Functions host's Application Insights connection, which the app's own telemetry shares.
  const insights = readSettings(
    { APPLICATIONINSIGHTS_CONNECTION_STRING: hostSettings.APPLICATIONINSIGHTS_CONNECTION_STRING },
    env,
    problems,
  );
  const quota = readSettings(quotaSettings, env, problems);
  const searchRate = readSettings(searchRateSettings, env, problems);
  const usage = readSettings(usageSettings, env, problems);
  const sharing = readSettings(sharingSettings, env, problems);
  const mcp = readSettings(mcpSettings, env, problems);
  const account = readSettings(accountSettings, env, problems);
  // Rules across settings only make sense once every value parsed.
  problems.throwIfAny();

  const appEnv = platform.APP_ENV;
  const localOnly = (setting: 'COSMOS_KEY' | 'WEBPUBSUB_CONNECTION_STRING') => {
    if (appEnv === 'azure' && platform[setting] !== undefined)
      problems.add(
        setting,
        'must not be set in Azure: the app authenticates with its managed identity, never with keys',
      );
  };
  localOnly('COSMOS_KEY');
  localOnly('WEBPUBSUB_CONNECTION_STRING');
  if (appEnv === 'azure' && redis.REDIS_URL !== undefined)
    problems.add(
      'REDIS_URL',
      'must not be set in Azure: Azure Managed Redis is reached with the managed identity (REDIS_HOST_NAME)',
    );
  if (hotStore.HOT_STORE === 'redis' && redis.REDIS_URL === undefined && redis.REDIS_HOST_NAME === undefined)
    problems.add(
      'HOT_STORE',
      'is "redis", but no Redis is named: set REDIS_URL (e.g. redis://127.0.0.1:6379) or REDIS_HOST_NAME',
    );
  // A lease shorter than the worker's wait would free the slot of a turn still running, letting one more in.
  if (quota.QUOTA_CONCURRENT_TURNS > 0 && quota.QUOTA_TURN_LEASE_SECONDS * 1000 < chat.CHAT_TURN_WAIT_MS)
    problems.add(
      'QUOTA_TURN_LEASE_SECONDS',
      `must be at least CHAT_TURN_WAIT_MS (${Math.ceil(chat.CHAT_TURN_WAIT_MS / 1000)} s): a turn's slot must outlast ` +
        'the longest the chat worker follows it',
    );
  if (platform.COSMOS_ENDPOINT === undefined)
    problems.add('COSMOS_ENDPOINT', 'missing (Cosmos DB holds sessions and history)');
  if (appEnv === 'azure' && platform.ServiceBusConnection__fullyQualifiedNamespace === undefined)
    problems.add(
      'ServiceBusConnection__fullyQualifiedNamespace',
      'missing (chat messages are queued on Service Bus)',
    );
  if (platform.WEBPUBSUB_ENDPOINT === undefined && platform.WEBPUBSUB_CONNECTION_STRING === undefined)
    problems.add('WEBPUBSUB_ENDPOINT', 'missing (tokens stream to clients through Web PubSub)');

  const auth = authConfig(identity, appEnv, problems);
  const llmChoice = llmConfig(
    llm,
    { env: appEnv, managedIdentityClientId: platform.AZURE_CLIENT_ID },
    problems,
  );
  problems.throwIfAny();
  if (llmChoice === undefined || auth === undefined)
    throw new Error('A settings rule returned no value without reporting a problem.');
  const models = modelCatalogue(modelValues, chatModelOf(llmChoice));
  const usageValues = usageConfig(usage);

  return {
    env: appEnv,
    managedIdentityClientId: platform.AZURE_CLIENT_ID,
    cosmos: {
      endpoint: platform.COSMOS_ENDPOINT ?? '',
      databaseId: platform.COSMOS_DATABASE,
      key: platform.COSMOS_KEY,
    },
    serviceBus: { fullyQualifiedNamespace: platform.ServiceBusConnection__fullyQualifiedNamespace },
    webPubSub: {
      hub: platform.WEBPUBSUB_HUB,
      endpoint: platform.WEBPUBSUB_ENDPOINT,
      connectionString: platform.WEBPUBSUB_CONNECTION_STRING,
    },
    llm: llmChoice,
    models,
    assistants: { publishers: publishPolicy(assistantValues) },
    auth,
    apiKeys: apiKeysConfig(apiKeys, appEnv),
    chat: chatConfig(chat),
    hotStore: hotStoreConfig(hotStore),
    redis: redisConfig(redis, platform.AZURE_CLIENT_ID),
    streaming: streamingConfig(streaming),
    knowledge: knowledgeConfig(knowledge),
    attachments: attachmentConfig(attachments),
    search: searchRelevance(search, embeddingModelOf(llmChoice)),
    usage: { ...usageValues, prices: withCataloguePrices(usageValues.prices, models) },
    health: { cacheMs: platform.HEALTH_CACHE_SECONDS * 1000 },
    telemetry: telemetryConfig(telemetry, insights.APPLICATIONINSIGHTS_CONNECTION_STRING),
    quota: quotaConfig(quota),
    searchesPerMinute: searchesPerMinute(searchRate),
    sharing: sharingConfig(sharing),
    mcp: mcpConfig(mcp),
    account: accountConfig(account),
  };
}

/** The price table with the catalogue's prices: a catalogue entry's price is its model's. */
function withCataloguePrices(table: PriceTable, catalogue: ModelCatalogue): PriceTable {
  const priced = catalogue.models.flatMap((entry) => (entry.price ? [[entry.id, entry.price] as const] : []));
  return { ...table, ...Object.fromEntries(priced) };
}

/** The name the chat model goes by: the Azure deployment's, or the model's at an OpenAI-compatible endpoint. */
function chatModelOf(llm: LlmConfig): string {
  return llm.connection.kind === 'azure-openai' ? llm.connection.chatDeployment : llm.connection.chatModel;
}

/** The name the embedding model goes by: the Azure deployment's, or the model's at an OpenAI-compatible endpoint. */
function embeddingModelOf(llm: LlmConfig): string {
  return llm.connection.kind === 'azure-openai'
    ? llm.connection.embeddingDeployment
    : llm.connection.embeddingModel;
}
