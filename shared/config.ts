// Application settings: every setting the app reads is declared here once, parsed once with zod, and a
// missing or malformed one stops start-up with an error that names it and says how to fix it.
import { z } from 'zod';
import type { LlmConnection } from './llm/llm-gateway.js';

export type AppEnvironment = 'local' | 'azure';

/** One app setting: its name, what it is for, and the value shown in local.settings.sample.json. */
export interface SettingSpec {
  name: string;
  help: string;
  sample: string;
}

// Identity-based connection settings read by the Functions host itself (triggers, Durable storage).
// The app reads `ServiceBusConnection__fullyQualifiedNamespace` too, for its own sender.
const hostSettings: SettingSpec[] = [
  { name: 'FUNCTIONS_WORKER_RUNTIME', help: 'Always "node".', sample: 'node' },
  {
    name: 'AzureWebJobsStorage__accountName',
    help: 'Storage account of the Functions host and the Durable task hub (identity-based).',
    sample: '<storage-account-name>',
  },
  {
    name: 'AzureWebJobsStorage__credential',
    help: '"managedidentity" for identity-based access to storage.',
    sample: 'managedidentity',
  },
  {
    name: 'AzureWebJobsStorage__clientId',
    help: 'Client id of the user-assigned managed identity used for storage.',
    sample: '<managed-identity-client-id>',
  },
  {
    name: 'ServiceBusConnection__credential',
    help: '"managedidentity" for the Service Bus triggers.',
    sample: 'managedidentity',
  },
  {
    name: 'ServiceBusConnection__clientId',
    help: 'Client id of the user-assigned managed identity used by the Service Bus triggers.',
    sample: '<managed-identity-client-id>',
  },
];

const appSettings: SettingSpec[] = [
  {
    name: 'APP_ENV',
    help: '"azure" in Azure; "local" only for the local runtime (enables dev identities and local keys).',
    sample: 'azure',
  },
  {
    name: 'AZURE_CLIENT_ID',
    help: 'Client id of the user-assigned managed identity the app uses for Cosmos DB, Service Bus, Web PubSub and Azure OpenAI.',
    sample: '<managed-identity-client-id>',
  },
  {
    name: 'COSMOS_ENDPOINT',
    help: 'Cosmos DB account endpoint, e.g. https://<account>.documents.azure.com:443/.',
    sample: 'https://<account>.documents.azure.com:443/',
  },
  { name: 'COSMOS_DATABASE', help: 'Cosmos DB database name.', sample: 'chat' },
  {
    name: 'COSMOS_KEY',
    help: 'Account key: only for the local runtime (Azure uses the managed identity).',
    sample: '',
  },
  {
    name: 'ServiceBusConnection__fullyQualifiedNamespace',
    help: 'Service Bus namespace host name, e.g. <namespace>.servicebus.windows.net.',
    sample: '<namespace>.servicebus.windows.net',
  },
  {
    name: 'WEBPUBSUB_ENDPOINT',
    help: 'Web PubSub endpoint, e.g. https://<name>.webpubsub.azure.com.',
    sample: 'https://<name>.webpubsub.azure.com',
  },
  { name: 'WEBPUBSUB_HUB', help: 'Web PubSub hub name.', sample: 'chat' },
  {
    name: 'WEBPUBSUB_CONNECTION_STRING',
    help: 'Connection string with an access key: only for the local runtime.',
    sample: '',
  },
  {
    name: 'LLM_PROVIDER',
    help: '"azure-openai", "openai-compatible" (OpenAI, Ollama, vLLM, llama.cpp, ...) or "offline" (the local stand-in).',
    sample: 'azure-openai',
  },
  {
    name: 'AZURE_OPENAI_ENDPOINT',
    help: 'Azure OpenAI endpoint, e.g. https://<resource>.openai.azure.com.',
    sample: 'https://<resource>.openai.azure.com',
  },
  { name: 'AZURE_OPENAI_API_VERSION', help: 'Azure OpenAI API version.', sample: '2024-10-21' },
  { name: 'AZURE_OPENAI_CHAT_DEPLOYMENT', help: 'Chat model deployment name.', sample: 'gpt-4o-mini' },
  {
    name: 'AZURE_OPENAI_EMBEDDING_DEPLOYMENT',
    help: 'Embedding model deployment name.',
    sample: 'text-embedding-3-small',
  },
  {
    name: 'AZURE_OPENAI_API_KEY',
    help: 'Optional key; leave empty to use Entra ID (the managed identity).',
    sample: '',
  },
  {
    name: 'LLM_BASE_URL',
    help: 'Base URL of an OpenAI-compatible API, e.g. https://api.openai.com/v1 or http://localhost:11434/v1.',
    sample: '',
  },
  { name: 'LLM_API_KEY', help: 'API key of the OpenAI-compatible endpoint (if it needs one).', sample: '' },
  { name: 'LLM_CHAT_MODEL', help: 'Chat model name at the OpenAI-compatible endpoint.', sample: '' },
  {
    name: 'LLM_EMBEDDING_MODEL',
    help: 'Embedding model name at the OpenAI-compatible endpoint.',
    sample: '',
  },
  {
    name: 'LLM_MAX_RETRIES',
    help: 'Retries of an LLM call on 429/5xx (retry-after is honoured).',
    sample: '3',
  },
  { name: 'LLM_TIMEOUT_MS', help: 'Timeout of one LLM request in milliseconds.', sample: '60000' },
  {
    name: 'OFFLINE_MODEL_TTFT_MS',
    help: 'Local runtime: the offline model waits this long before its first token.',
    sample: '200',
  },
  {
    name: 'OFFLINE_MODEL_TOKENS_PER_SECOND',
    help: 'Local runtime: the offline model streams at this rate (0 = as fast as possible).',
    sample: '60',
  },
];

// Read only by the local runtime (npm start); the Functions host ignores them.
const localRuntimeSettings: SettingSpec[] = [
  {
    name: 'PORT',
    help: 'Local runtime: HTTP port (default 7071, the Functions host default).',
    sample: '7071',
  },
  {
    name: 'LOCAL_DATA_DIR',
    help: 'Local runtime: folder where local Cosmos DB data is kept across restarts.',
    sample: '.local-data',
  },
  {
    name: 'LOG_LEVEL',
    help: 'Local runtime: least severe log level printed (trace, debug, information, warning, error).',
    sample: 'warning',
  },
];

/** Every setting the app and its host read, in the order local.settings.sample.json lists them. */
export const settingSpecs: readonly SettingSpec[] = [
  ...hostSettings,
  ...appSettings,
  ...localRuntimeSettings,
];

const helpByName = new Map(settingSpecs.map((spec) => [spec.name, spec.help]));

const optionalText = z
  .string()
  .trim()
  .transform((value) => (value === '' ? undefined : value))
  .optional();
const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });
const optionalUrl = optionalText.pipe(httpUrl.optional());
const positiveInt = (fallback: number) =>
  optionalText
    .transform((value) => (value === undefined ? fallback : Number(value)))
    .pipe(z.number({ error: 'must be a whole number' }).int('must be a whole number').min(0).max(1_000_000));

const rawSettings = z.object({
  APP_ENV: z.enum(['local', 'azure'], { error: 'must be "azure" (or "local" for the local runtime)' }),
  AZURE_CLIENT_ID: optionalText,
  COSMOS_ENDPOINT: optionalText.pipe(httpUrl.optional()),
  COSMOS_DATABASE: optionalText.pipe(z.string().default('chat')),
  COSMOS_KEY: optionalText,
  ServiceBusConnection__fullyQualifiedNamespace: optionalText,
  WEBPUBSUB_ENDPOINT: optionalUrl,
  WEBPUBSUB_HUB: optionalText.pipe(
    z
      .string()
      .regex(/^[A-Za-z][A-Za-z0-9_]{0,127}$/, 'must start with a letter and use letters, digits and _')
      .default('chat'),
  ),
  WEBPUBSUB_CONNECTION_STRING: optionalText,
  LLM_PROVIDER: optionalText.pipe(z.enum(['azure-openai', 'openai-compatible', 'offline']).optional()),
  AZURE_OPENAI_ENDPOINT: optionalUrl,
  AZURE_OPENAI_API_VERSION: optionalText.pipe(z.string().default('2024-10-21')),
  AZURE_OPENAI_CHAT_DEPLOYMENT: optionalText,
  AZURE_OPENAI_EMBEDDING_DEPLOYMENT: optionalText,
  AZURE_OPENAI_API_KEY: optionalText,
  LLM_BASE_URL: optionalUrl,
  LLM_API_KEY: optionalText,
  LLM_CHAT_MODEL: optionalText,
  LLM_EMBEDDING_MODEL: optionalText,
  LLM_MAX_RETRIES: positiveInt(3),
  LLM_TIMEOUT_MS: positiveInt(60_000),
  OFFLINE_MODEL_TTFT_MS: positiveInt(200),
  OFFLINE_MODEL_TOKENS_PER_SECOND: positiveInt(60),
});
type RawSettings = z.infer<typeof rawSettings>;

export interface AppConfig {
  env: AppEnvironment;
  /** Client id of the user-assigned managed identity (Azure); undefined = the default credential chain. */
  managedIdentityClientId: string | undefined;
  cosmos: { endpoint: string; databaseId: string; key: string | undefined };
  serviceBus: { fullyQualifiedNamespace: string | undefined };
  webPubSub: { hub: string; endpoint: string | undefined; connectionString: string | undefined };
  llm: { provider: 'azure-openai' | 'openai-compatible' | 'offline'; connection: LlmConnection } & {
    maxRetries: number;
    timeoutMs: number;
  };
  offlineModel: { ttftMs: number; tokensPerSecond: number };
}

/** Start-up failure listing every bad setting, each with how to fix it. */
export class ConfigError extends Error {
  constructor(readonly problems: readonly { setting: string; problem: string }[]) {
    super(
      'Invalid configuration:\n' +
        problems
          .map(({ setting, problem }) => {
            const help = helpByName.get(setting);
            return `  - ${setting}: ${problem}${help ? `. ${help}` : ''}`;
          })
          .join('\n') +
        '\nSet these in local.settings.json (Values) or the environment; local.settings.sample.json lists every setting.',
    );
    this.name = 'ConfigError';
  }

  /** One problem per failed setting; a setting that is absent is reported as missing. */
  static fromIssues(error: z.ZodError, env: Readonly<Record<string, string | undefined>>): ConfigError {
    return new ConfigError(
      error.issues.map((issue) => ({
        setting: String(issue.path[0] ?? '(settings)'),
        problem: env[String(issue.path[0])] === undefined ? 'missing' : issue.message,
      })),
    );
  }
}

type Problem = { setting: string; problem: string };

/** Parses the settings from an environment (process.env in production). Throws ConfigError. */
export function loadConfig(env: Readonly<Record<string, string | undefined>>): AppConfig {
  const parsed = rawSettings.safeParse(env);
  if (!parsed.success) throw ConfigError.fromIssues(parsed.error, env);
  const raw = parsed.data;
  const problems: Problem[] = [];
  const require = (setting: keyof RawSettings, value: string | undefined, why: string): string => {
    if (value === undefined) problems.push({ setting, problem: `missing (${why})` });
    return value ?? '';
  };
  const localOnly = (setting: keyof RawSettings, value: string | undefined) => {
    if (raw.APP_ENV === 'azure' && value !== undefined)
      problems.push({
        setting,
        problem: 'must not be set in Azure: the app authenticates with its managed identity, never with keys',
      });
  };

  localOnly('COSMOS_KEY', raw.COSMOS_KEY);
  localOnly('WEBPUBSUB_CONNECTION_STRING', raw.WEBPUBSUB_CONNECTION_STRING);
  const cosmosEndpoint = require('COSMOS_ENDPOINT', raw.COSMOS_ENDPOINT, 'Cosmos DB holds sessions and history');
  if (raw.APP_ENV === 'azure')
    require('ServiceBusConnection__fullyQualifiedNamespace', raw.ServiceBusConnection__fullyQualifiedNamespace, 'chat messages are queued on Service Bus');
  if (raw.WEBPUBSUB_ENDPOINT === undefined && raw.WEBPUBSUB_CONNECTION_STRING === undefined)
    problems.push({
      setting: 'WEBPUBSUB_ENDPOINT',
      problem: 'missing (tokens stream to clients through Web PubSub)',
    });

  const provider = raw.LLM_PROVIDER ?? (raw.APP_ENV === 'local' ? 'offline' : undefined);
  if (provider === undefined)
    problems.push({ setting: 'LLM_PROVIDER', problem: 'missing (say which LLM endpoint the app calls)' });
  if (provider === 'offline' && raw.APP_ENV === 'azure')
    problems.push({
      setting: 'LLM_PROVIDER',
      problem: '"offline" is the local stand-in model and exists only locally',
    });

  let connection: LlmConnection | undefined;
  if (provider === 'azure-openai') {
    connection = {
      kind: 'azure-openai',
      endpoint: require('AZURE_OPENAI_ENDPOINT', raw.AZURE_OPENAI_ENDPOINT, 'LLM_PROVIDER is azure-openai'),
      apiVersion: raw.AZURE_OPENAI_API_VERSION,
      chatDeployment: require('AZURE_OPENAI_CHAT_DEPLOYMENT', raw.AZURE_OPENAI_CHAT_DEPLOYMENT, 'LLM_PROVIDER is azure-openai'),
      embeddingDeployment: require('AZURE_OPENAI_EMBEDDING_DEPLOYMENT', raw.AZURE_OPENAI_EMBEDDING_DEPLOYMENT, 'LLM_PROVIDER is azure-openai'),
      apiKey: raw.AZURE_OPENAI_API_KEY,
      managedIdentityClientId: raw.AZURE_CLIENT_ID,
    };
  } else if (provider === 'openai-compatible' || provider === 'offline') {
    // The local runtime points LLM_BASE_URL at its offline model before it loads the settings.
    connection = {
      kind: 'openai-compatible',
      baseUrl: require('LLM_BASE_URL', raw.LLM_BASE_URL, `LLM_PROVIDER is ${provider}`),
      apiKey: raw.LLM_API_KEY,
      chatModel: require('LLM_CHAT_MODEL', raw.LLM_CHAT_MODEL, `LLM_PROVIDER is ${provider}`),
      embeddingModel: require('LLM_EMBEDDING_MODEL', raw.LLM_EMBEDDING_MODEL, `LLM_PROVIDER is ${provider}`),
    };
  }

  if (problems.length > 0 || connection === undefined || provider === undefined)
    throw new ConfigError(problems);
  return {
    env: raw.APP_ENV,
    managedIdentityClientId: raw.AZURE_CLIENT_ID,
    cosmos: { endpoint: cosmosEndpoint, databaseId: raw.COSMOS_DATABASE, key: raw.COSMOS_KEY },
    serviceBus: { fullyQualifiedNamespace: raw.ServiceBusConnection__fullyQualifiedNamespace },
    webPubSub: {
      hub: raw.WEBPUBSUB_HUB,
      endpoint: raw.WEBPUBSUB_ENDPOINT,
      connectionString: raw.WEBPUBSUB_CONNECTION_STRING,
    },
    llm: { provider, connection, maxRetries: raw.LLM_MAX_RETRIES, timeoutMs: raw.LLM_TIMEOUT_MS },
    offlineModel: { ttftMs: raw.OFFLINE_MODEL_TTFT_MS, tokensPerSecond: raw.OFFLINE_MODEL_TOKENS_PER_SECOND },
  };
}
