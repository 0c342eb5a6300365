// Writes the files derived from what lives in code: infra/generated/definitions.json (queues, topics, containers,
// the hub and the function app's settings, in the shape the Bicep modules loop over) and local.settings.sample.json
// (every setting row, with a value that works locally). Run after changing any of them: npm run generate
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { localRuntimeSettings } from '../local/settings.js';
import { appSettings } from '../shared/app/config.js';
import type { ContainerSpec } from '../shared/cosmos/container-spec.js';
import { indexingPaths } from '../shared/cosmos/indexed-paths.js';
import { COSMOS_DATABASE, cosmosContainers } from '../shared/app/cosmos-containers.js';
import {
  DUPLICATE_DETECTION_WINDOW,
  MAX_DELIVERY_COUNT,
  SUBSCRIPTION_MESSAGE_TTL,
} from '../shared/messaging/service-bus-entities.js';
import { serviceBusQueues, serviceBusTopics } from '../shared/app/service-bus-entities.js';
import { settingsOf, type Setting } from '../shared/settings/setting.js';
import { WEB_PUBSUB_HUB } from '../shared/streaming/contracts.js';

export const DEFINITIONS_PATH = fileURLToPath(
  new URL('../infra/generated/definitions.json', import.meta.url),
);
export const SAMPLE_SETTINGS_PATH = fileURLToPath(new URL('../local.settings.sample.json', import.meta.url));
export const GENERATE_COMMAND = 'npm run generate';

/** Every setting row: the app's and its host's, then the local runtime's own. */
export const allSettings: readonly Setting<unknown>[] = [...appSettings, ...settingsOf(localRuntimeSettings)];

/** Why a setting the function app must not have is left out of infra/ (or undefined when infra/ sets it). */
function whyNotInAzure(setting: Setting<unknown>): string | undefined {
  switch (setting.azure.kind) {
    case 'bicep':
      return undefined;
    case 'default':
      return 'Tuning: the code default applies; set it in the portal to change it.';
    case 'platform':
      return 'Set by App Service itself.';
    case 'never':
      return setting.azure.reason;
  }
}

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
  /** `/*` (everything), or only the paths a container's queries use when its spec names them (indexedPaths). */
  includedPaths: { path: string }[];
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
    /** Every app setting infra/ gives the function app, in local.settings.sample.json order. */
    appSettingNames: string[];
    /** Settings the function app must not have, each with the reason. */
    settingsNotInAzure: Record<string, string>;
  };
}

/** Pure: what definitions.json must contain for the code as it is now. */
export function buildInfraDefinitions(): InfraDefinitions {
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
    $comment: `Generated from the containers, Service Bus entities and setting rows in shared/ and local/. Do not edit: run \`${GENERATE_COMMAND}\`.`,
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
      appSettingNames: allSettings
        .filter((setting) => setting.azure.kind === 'bicep')
        .map((setting) => setting.name),
      settingsNotInAzure: Object.fromEntries(
        allSettings.flatMap((setting) => {
          const reason = whyNotInAzure(setting);
          return reason === undefined ? [] : [[setting.name, reason]];
        }),
      ),
    },
  };
}

/** Pure: a container's entry. Throws when the spec is one Azure would refuse, naming the container. */
export function containerInfra(container: ContainerSpec): CosmosContainerInfra {
  const problem = (text: string) => new Error(`Cosmos DB container '${container.id}': ${text}`);
  const paths = [...container.partitionKeyPaths];
  if (paths.length < 1 || paths.length > 3) throw problem('a partition key has one to three paths');
  const vectorPaths = (container.vectorEmbeddings ?? []).map((v) => v.path);
  const indexing = indexingPaths(container);
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
    includedPaths: indexing.included.map((path) => ({ path })),
    excludedPaths: indexing.excluded.map((path) => ({ path })),
  };
}

export interface SampleSettingsFile {
  IsEncrypted: false;
  Values: Record<string, string>;
}

/**
 * Pure: local.settings.sample.json, every setting a developer may set with a value that works locally when the
 * file is copied to local.settings.json as it is (settings App Service sets itself are left out).
 */
export function buildSampleSettings(): SampleSettingsFile {
  return {
    IsEncrypted: false,
    Values: Object.fromEntries(
      allSettings
        .filter((setting) => setting.azure.kind !== 'platform')
        .map((setting) => [setting.name, setting.sample]),
    ),
  };
}

/** A file's text, formatted the way `prettier --check` expects it. */
export async function renderJson(value: unknown, file: string): Promise<string> {
  const options = (await resolveConfig(file)) ?? {};
  return format(JSON.stringify(value), { ...options, filepath: file });
}

async function main(): Promise<void> {
  await mkdir(path.dirname(DEFINITIONS_PATH), { recursive: true });
  for (const [file, value] of [
    [DEFINITIONS_PATH, buildInfraDefinitions()],
    [SAMPLE_SETTINGS_PATH, buildSampleSettings()],
  ] as const) {
    await writeFile(file, await renderJson(value, file));
    console.log(`Wrote ${path.relative(process.cwd(), file)}`);
  }
}

// Importing this module (the drift test does) must not write anything.
const invokedDirectly =
  process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) await main();
