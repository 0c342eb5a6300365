// Writes the files derived from what lives in code: infra/generated/definitions.json (queues, topics, containers,
// the hub and the function app's settings, in the shape the Bicep modules loop over) and local.settings.sample.json
// (every setting row, with a value that works locally). Run after changing any of them: npm run generate
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { localRuntimeSettings } from '../local/settings.js';
import { appSettings } from '../shared/app/config.js';
import { COSMOS_DATABASE, cosmosContainers } from '../shared/cosmos/containers.js';
import {
  DUPLICATE_DETECTION_WINDOW,
  MAX_DELIVERY_COUNT,
  serviceBusQueues,
  serviceBusTopics,
} from '../shared/messaging/service-bus-entities.js';
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

export interface CosmosContainerInfra {
  name: string;
  partitionKeyPath: string;
  /** Seconds; -1 = on, items opt in with `ttl`; null = time to live off. Every entry has the key so Bicep sees one shape. */
  defaultTtl: number | null;
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
  maxDeliveryCount: number;
  deadLetteringOnMessageExpiration: boolean;
}

export interface TopicInfra {
  name: string;
  requiresDuplicateDetection: boolean;
  duplicateDetectionHistoryTimeWindow: string;
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
  // Dead-lettering expired messages keeps the "nothing is dropped silently" rule for every entity.
  const deadLetteringOnMessageExpiration = true;
  return {
    $comment: `Generated from the containers, Service Bus entities and setting rows in shared/ and local/. Do not edit: run \`${GENERATE_COMMAND}\`.`,
    cosmos: {
      databaseName: COSMOS_DATABASE,
      containers: cosmosContainers.map((container) => ({
        name: container.id,
        partitionKeyPath: container.partitionKey,
        defaultTtl: container.defaultTtlSeconds ?? null,
      })),
    },
    serviceBus: {
      queues: serviceBusQueues.map((queue) => ({
        name: queue.name,
        requiresSession: queue.requiresSession,
        requiresDuplicateDetection: true,
        duplicateDetectionHistoryTimeWindow: DUPLICATE_DETECTION_WINDOW,
        maxDeliveryCount: MAX_DELIVERY_COUNT,
        deadLetteringOnMessageExpiration,
      })),
      topics: serviceBusTopics.map((topic) => ({
        name: topic.name,
        requiresDuplicateDetection: true,
        duplicateDetectionHistoryTimeWindow: DUPLICATE_DETECTION_WINDOW,
        subscriptions: topic.subscriptions.map((subscription) => ({
          name: subscription.name,
          requiresSession: subscription.requiresSession,
          maxDeliveryCount: MAX_DELIVERY_COUNT,
          deadLetteringOnMessageExpiration,
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
