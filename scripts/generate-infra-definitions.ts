// Writes infra/generated/definitions.json: the names and entity settings that live in code (queues, topics,
// containers, the hub, app settings), in the shape the Bicep modules loop over. Run after changing any of them:
//   npx tsx scripts/generate-infra-definitions.ts
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { settingSpecs } from '../shared/config.js';
import { COSMOS_DATABASE, cosmosContainers, type ContainerSpec } from '../shared/cosmos/schema.js';
import {
  DUPLICATE_DETECTION_WINDOW,
  MAX_DELIVERY_COUNT,
  SUBSCRIPTION_MESSAGE_TTL,
  WEB_PUBSUB_HUB,
  serviceBusQueues,
  serviceBusTopics,
} from '../shared/resources.js';

export const DEFINITIONS_PATH = fileURLToPath(
  new URL('../infra/generated/definitions.json', import.meta.url),
);
export const GENERATE_COMMAND = 'npx tsx scripts/generate-infra-definitions.ts';

/**
 * Settings from shared/config.ts that the function app in Azure must NOT have, each with the reason. Keys and
 * local stand-ins would defeat `disableLocalAuth`; Flex Consumption rejects FUNCTIONS_WORKER_RUNTIME.
 */
export const settingsNotInAzure: Readonly<Record<string, string>> = {
  FUNCTIONS_WORKER_RUNTIME:
    'Flex Consumption takes the runtime from functionAppConfig.runtime and does not accept this app setting.',
  PORT: 'Local runtime only.',
  LOCAL_DATA_DIR: 'Local runtime only.',
  LOG_LEVEL: 'Local runtime only.',
  COSMOS_KEY:
    'Keys are for the local runtime; in Azure the managed identity signs in (local auth is disabled).',
  WEBPUBSUB_CONNECTION_STRING:
    'Keys are for the local runtime; in Azure the managed identity signs in (local auth is disabled).',
  AZURE_OPENAI_API_KEY: 'Azure OpenAI is reached with the managed identity (local auth is disabled).',
  LLM_BASE_URL: 'For LLM_PROVIDER=openai-compatible; Azure uses azure-openai.',
  LLM_API_KEY: 'For LLM_PROVIDER=openai-compatible; Azure uses azure-openai.',
  LLM_CHAT_MODEL: 'For LLM_PROVIDER=openai-compatible; Azure uses azure-openai.',
  LLM_EMBEDDING_MODEL: 'For LLM_PROVIDER=openai-compatible; Azure uses azure-openai.',
  OFFLINE_MODEL_TTFT_MS: 'The offline stand-in model exists only in the local runtime.',
  OFFLINE_MODEL_TOKENS_PER_SECOND: 'The offline stand-in model exists only in the local runtime.',
  AUTH_ENTRA_ISSUER: 'Derived from AUTH_ENTRA_TENANT_ID; set it in the portal only for a non-public cloud.',
  AUTH_ENTRA_JWKS_URL: 'Derived from AUTH_ENTRA_TENANT_ID; set it in the portal only for a non-public cloud.',
  CHAT_MAX_TEXT_CHARS: 'Tuning: the code default applies; set it in the portal to change it.',
  CHAT_MAX_TOOL_ROUNDS: 'Tuning: the code default applies; set it in the portal to change it.',
  CHAT_PROMPT_TOKEN_BUDGET: 'Tuning: the code default applies; set it in the portal to change it.',
  CHAT_MAX_OUTPUT_TOKENS: 'Tuning: the code default applies; set it in the portal to change it.',
  CHAT_TURN_WAIT_MS: 'Tuning: the code default applies; set it in the portal to change it.',
  STREAM_FLUSH_INTERVAL_MS: 'Tuning: the code default applies; set it in the portal to change it.',
  STREAM_FLUSH_MAX_CHARS: 'Tuning: the code default applies; set it in the portal to change it.',
  SSE_IDLE_TIMEOUT_MS: 'Tuning: the code default applies; set it in the portal to change it.',
};

/** App settings that only the platform reads (the Functions host's telemetry), so the code does not declare them. */
export const infraOnlyAppSettings: Readonly<Record<string, string>> = {
  APPLICATIONINSIGHTS_CONNECTION_STRING:
    'Where the Functions host sends telemetry (not a secret: ingestion needs Entra ID).',
  APPLICATIONINSIGHTS_AUTHENTICATION_STRING:
    'Makes the host authenticate to Application Insights with the managed identity (local auth is disabled there).',
};

/**
 * One container, in the one shape every entry shares (null or [] where a container has none), so that Bicep reads
 * the same properties of each. Vector lengths are not here: infra's embeddingDimensions parameter adds them.
 */
export interface CosmosContainerInfra {
  name: string;
  /** As Azure takes it: Hash for one path, MultiHash (hierarchical) for two or three. */
  partitionKey: { paths: string[]; kind: 'Hash' | 'MultiHash'; version: 2 };
  /** Seconds; -1 = on, items opt in with `ttl`; null = time to live off. */
  defaultTtl: number | null;
  vectorEmbeddings: { path: string; dataType: string; distanceFunction: string }[];
  vectorIndexes: { path: string; type: string }[];
  fullTextPaths: { path: string; language: string }[];
  /** One per full-text path: FullTextScore and FullTextContains use the index, not a scan. */
  fullTextIndexes: { path: string }[];
  /** Vector paths leave the range index: indexing every number of an embedding would only cost RUs. */
  excludedPaths: { path: string }[];
}

export interface QueueInfra {
  name: string;
  requiresSession: boolean;
  requiresDuplicateDetection: boolean;
  duplicateDetectionHistoryTimeWindow: string;
  maxDeliveryCount: number;
  deadLetteringOnMessageExpiration: boolean;
}

export interface SubscriptionInfra {
  name: string;
  requiresSession: boolean;
}

/** Entity settings every subscription of a topic shares; on the topic, so the JSON has them with no subscription. */
export interface SubscriptionSettingsInfra {
  maxDeliveryCount: number;
  /** ISO 8601. */
  defaultMessageTimeToLive: string;
  deadLetteringOnMessageExpiration: boolean;
}

export interface TopicInfra {
  name: string;
  requiresDuplicateDetection: boolean;
  duplicateDetectionHistoryTimeWindow: string;
  subscriptionSettings: SubscriptionSettingsInfra;
  subscriptions: SubscriptionInfra[];
}

export interface InfraDefinitions {
  $comment: string;
  cosmos: { databaseName: string; containers: CosmosContainerInfra[] };
  serviceBus: { queues: QueueInfra[]; topics: TopicInfra[] };
  webPubSub: { hub: string };
  functionApp: {
    /** Every app setting of the function app that the code reads, in local.settings.sample.json order. */
    appSettingNames: string[];
    infraOnlyAppSettings: Record<string, string>;
    settingsNotInAzure: Record<string, string>;
  };
}

/** Pure: what definitions.json must contain for the code as it is now. Throws when an exclusion names no setting. */
export function buildInfraDefinitions(): InfraDefinitions {
  const declared = new Set(settingSpecs.map((spec) => spec.name));
  const stale = Object.keys(settingsNotInAzure).filter((name) => !declared.has(name));
  if (stale.length > 0)
    throw new Error(
      `settingsNotInAzure names settings that shared/config.ts no longer declares: ${stale.join(', ')}. ` +
        'Update scripts/generate-infra-definitions.ts.',
    );

  // Queues never expire messages (no defaultMessageTimeToLive), so dead-lettering on expiration only keeps the
  // "nothing is dropped silently" rule should one ever be given a time to live.
  const queueDeadLetteringOnMessageExpiration = true;
  // Subscriptions drop what expires. A dead-letter queue never expires and counts toward the topic's size quota
  // like the subscription itself, so dead-lettering would turn the bounded backlog of a subscription whose consumer
  // stopped into an unbounded one, until the full topic refuses the chat turn's own sends. A message a consumer
  // failed on still dead-letters after MAX_DELIVERY_COUNT deliveries, with its reason.
  const subscriptionSettings: SubscriptionSettingsInfra = {
    maxDeliveryCount: MAX_DELIVERY_COUNT,
    defaultMessageTimeToLive: SUBSCRIPTION_MESSAGE_TTL,
    deadLetteringOnMessageExpiration: false,
  };
  return {
    $comment: `Generated from shared/resources.ts, shared/cosmos/schema.ts and shared/config.ts. Do not edit: run \`${GENERATE_COMMAND}\`.`,
    cosmos: {
      databaseName: COSMOS_DATABASE,
      containers: cosmosContainers.map(containerInfra),
    },
    serviceBus: {
      queues: serviceBusQueues.map((queue) => ({
        name: queue.name,
        requiresSession: queue.requiresSession,
        requiresDuplicateDetection: true,
        duplicateDetectionHistoryTimeWindow: DUPLICATE_DETECTION_WINDOW,
        maxDeliveryCount: MAX_DELIVERY_COUNT,
        deadLetteringOnMessageExpiration: queueDeadLetteringOnMessageExpiration,
      })),
      topics: serviceBusTopics.map((topic) => ({
        name: topic.name,
        requiresDuplicateDetection: true,
        duplicateDetectionHistoryTimeWindow: DUPLICATE_DETECTION_WINDOW,
        subscriptionSettings: { ...subscriptionSettings },
        subscriptions: topic.subscriptions.map((subscription) => ({
          name: subscription.name,
          requiresSession: subscription.requiresSession,
        })),
      })),
    },
    webPubSub: { hub: WEB_PUBSUB_HUB },
    functionApp: {
      appSettingNames: settingSpecs.map((spec) => spec.name).filter((name) => !(name in settingsNotInAzure)),
      infraOnlyAppSettings: { ...infraOnlyAppSettings },
      settingsNotInAzure: { ...settingsNotInAzure },
    },
  };
}

/** Pure: a container's entry. Throws when the spec is one Azure would refuse, naming the container. */
export function containerInfra(container: ContainerSpec): CosmosContainerInfra {
  const problem = (text: string) => new Error(`shared/cosmos/schema.ts container '${container.id}': ${text}`);
  const paths = [...container.partitionKeyPaths];
  if (paths.length < 1 || paths.length > 3) throw problem('a partition key has one to three paths');
  const vectorPaths = (container.vectorEmbeddings ?? []).map((v) => v.path);
  for (const index of container.vectorIndexes ?? [])
    if (!vectorPaths.includes(index.path))
      throw problem(`vector index ${index.path} has no vector embedding`);
  return {
    name: container.id,
    partitionKey: { paths, kind: paths.length === 1 ? 'Hash' : 'MultiHash', version: 2 },
    defaultTtl: container.defaultTtlSeconds ?? null,
    vectorEmbeddings: (container.vectorEmbeddings ?? []).map((v) => ({ ...v })),
    vectorIndexes: (container.vectorIndexes ?? []).map((v) => ({ ...v })),
    fullTextPaths: (container.fullTextPaths ?? []).map((f) => ({ ...f })),
    fullTextIndexes: (container.fullTextPaths ?? []).map((f) => ({ path: f.path })),
    excludedPaths: vectorPaths.map((path) => ({ path: `${path}/*` })),
  };
}

/** The file text, formatted the way `prettier --check` expects it. */
export async function renderInfraDefinitions(definitions: InfraDefinitions): Promise<string> {
  const options = (await resolveConfig(DEFINITIONS_PATH)) ?? {};
  return format(JSON.stringify(definitions), { ...options, filepath: DEFINITIONS_PATH });
}

async function main(): Promise<void> {
  await mkdir(path.dirname(DEFINITIONS_PATH), { recursive: true });
  await writeFile(DEFINITIONS_PATH, await renderInfraDefinitions(buildInfraDefinitions()));
  console.log(`Wrote ${path.relative(process.cwd(), DEFINITIONS_PATH)}`);
}

// Importing this module (the drift test does) must not write anything.
const invokedDirectly =
  process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) await main();
