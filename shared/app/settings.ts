// The settings of the platform the app runs on: where it runs, its identity, and how it reaches Cosmos DB,
// Service Bus and Web PubSub; and the settings the Functions host reads itself. Rows: shared/settings/setting.ts.
import { choiceSetting, defineSettings, intSetting, textSetting, urlSetting } from '../settings/setting.js';

const keysAreLocal = {
  kind: 'never',
  reason: 'Keys are for the local runtime; in Azure the managed identity signs in (local auth is disabled).',
} as const;

export const platformSettings = defineSettings({
  APP_ENV: choiceSetting(['local', 'azure'], {
    required: true,
    error: 'must be "azure" (or "local" for the local runtime)',
    help: '"azure" in Azure; "local" only for the local runtime (enables dev identities and local keys).',
    sample: 'local',
    azure: { kind: 'bicep' },
  }),
  AZURE_CLIENT_ID: textSetting({
    help:
      'Client id of the user-assigned managed identity the app uses for Cosmos DB, Service Bus, Web PubSub and ' +
      'Azure OpenAI. Leave it empty locally: the app then signs in to Azure as you (az login).',
    azure: { kind: 'bicep' },
  }),
  COSMOS_ENDPOINT: urlSetting({
    help: 'Cosmos DB account endpoint, e.g. https://<account>.documents.azure.com:443/ (the local runtime sets its own).',
    azure: { kind: 'bicep' },
  }),
  COSMOS_DATABASE: textSetting({
    default: 'chat',
    help: 'Cosmos DB database name.',
    azure: { kind: 'bicep' },
  }),
  COSMOS_KEY: textSetting({
    help: 'Account key: only for the local runtime (Azure uses the managed identity).',
    azure: keysAreLocal,
  }),
  ServiceBusConnection__fullyQualifiedNamespace: textSetting({
    help:
      'Service Bus namespace host name, e.g. <namespace>.servicebus.windows.net; read by the triggers and by the ' +
      "app's sender (the local runtime has its own broker).",
    azure: { kind: 'bicep' },
  }),
  WEBPUBSUB_ENDPOINT: urlSetting({
    help: 'Web PubSub endpoint, e.g. https://<name>.webpubsub.azure.com (the local runtime serves its own).',
    azure: { kind: 'bicep' },
  }),
  WEBPUBSUB_HUB: textSetting({
    default: 'chat',
    pattern: [/^[A-Za-z][A-Za-z0-9_]{0,127}$/, 'must start with a letter and use letters, digits and _'],
    help: 'Web PubSub hub name.',
    azure: { kind: 'bicep' },
  }),
  WEBPUBSUB_CONNECTION_STRING: textSetting({
    help: 'Connection string with an access key: only for the local runtime.',
    azure: keysAreLocal,
  }),
  HEALTH_CACHE_SECONDS: intSetting({
    default: 30,
    max: 3_600,
    help:
      'GET /api/health reads each Cosmos DB container, Web PubSub, Service Bus, the task hub and the LLM route ' +
      'at most once in this many seconds; polls in between get the last answer (0 = check on every poll).',
    azure: { kind: 'default' },
  }),
});

const setByBicepForTheHost = { applies: 'host', azure: { kind: 'bicep' } } as const;

/** Read by the Functions host (triggers, the Durable task hub), never by the app's code. */
export const hostSettings = defineSettings({
  FUNCTIONS_WORKER_RUNTIME: textSetting({
    default: 'node',
    help: 'Always "node" (Functions Core Tools needs it locally).',
    applies: 'host',
    azure: {
      kind: 'never',
      reason:
        'Flex Consumption takes the runtime from functionAppConfig.runtime and does not accept this app setting.',
    },
  }),
  AzureWebJobsStorage: textSetting({
    help:
      'Functions Core Tools only: storage of the host and the Durable task hub as a connection string; ' +
      '"UseDevelopmentStorage=true" is the Azurite emulator. The local runtime (npm start) needs none.',
    sample: 'UseDevelopmentStorage=true',
    applies: 'host',
    azure: {
      kind: 'never',
      reason: 'In Azure the host reaches storage with its identity (AzureWebJobsStorage__*).',
    },
  }),
  AzureWebJobsStorage__accountName: textSetting({
    help: 'Storage account of the Functions host and the Durable task hub (identity-based).',
    ...setByBicepForTheHost,
  }),
  AzureWebJobsStorage__credential: textSetting({
    help: '"managedidentity" in Azure; leave it empty locally to sign in as yourself (az login).',
    ...setByBicepForTheHost,
  }),
  AzureWebJobsStorage__clientId: textSetting({
    help: 'Client id of the user-assigned managed identity used for storage (Azure only).',
    ...setByBicepForTheHost,
  }),
  DURABLE_TASK_SCHEDULER_CONNECTION_STRING: textSetting({
    help:
      'The Durable Task Scheduler of the task hub (Endpoint=...;Authentication=ManagedIdentity;ClientID=...), read ' +
      "when host.json's storageProvider is azureManaged (infra's durableTaskBackend); empty with Azure Storage.",
    ...setByBicepForTheHost,
  }),
  ServiceBusConnection__credential: textSetting({
    help: '"managedidentity" for the Service Bus triggers in Azure; leave it empty locally (az login).',
    ...setByBicepForTheHost,
  }),
  ServiceBusConnection__clientId: textSetting({
    help: 'Client id of the user-assigned managed identity used by the Service Bus triggers (Azure only).',
    ...setByBicepForTheHost,
  }),
  APPLICATIONINSIGHTS_CONNECTION_STRING: textSetting({
    help:
      "Where the Functions host and the app's OpenTelemetry send telemetry (not a secret: ingestion needs Entra " +
      'ID, with the managed identity); empty locally.',
    applies: 'app',
    azure: { kind: 'bicep' },
  }),
  APPLICATIONINSIGHTS_AUTHENTICATION_STRING: textSetting({
    help:
      'Makes the host authenticate to Application Insights with the managed identity (local auth is disabled ' +
      'there); empty locally.',
    ...setByBicepForTheHost,
  }),
});
