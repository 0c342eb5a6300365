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
    name: 'LLM_EMBEDDING_DIMENSIONS',
    help: 'Length of the embedding vectors the app asks for and stores; the Cosmos DB vector policies were created with it.',
    sample: '1536',
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
  {
    name: 'AUTH_MODE',
    help: 'How callers are identified: "app-service" (App Service authentication principal headers; requires authentication to be on), "entra" (validated Entra ID bearer tokens) or "dev" (local only: x-ms-client-principal-id of a dev user). Default: app-service in Azure, dev locally.',
    sample: 'app-service',
  },
  {
    name: 'AUTH_ENTRA_TENANT_ID',
    help: 'AUTH_MODE=entra: the tenant (directory) id tokens are issued by.',
    sample: '',
  },
  {
    name: 'AUTH_ENTRA_AUDIENCE',
    help: "AUTH_MODE=entra: accepted token audiences, comma-separated (the API app's client id and/or api://... URI).",
    sample: '',
  },
  {
    name: 'AUTH_ENTRA_ISSUER',
    help: 'AUTH_MODE=entra: expected issuer; default https://login.microsoftonline.com/<tenant>/v2.0.',
    sample: '',
  },
  {
    name: 'AUTH_ENTRA_JWKS_URL',
    help: 'AUTH_MODE=entra: signing keys; default https://login.microsoftonline.com/<tenant>/discovery/v2.0/keys.',
    sample: '',
  },
  {
    name: 'CHAT_MAX_TEXT_CHARS',
    help: 'Longest chat message accepted, in characters (longer ones get 400).',
    sample: '8000',
  },
  {
    name: 'CHAT_MAX_TOOL_ROUNDS',
    help: 'Most rounds of tool calls in one turn; then the model must answer without tools.',
    sample: '10',
  },
  {
    name: 'CHAT_PROMPT_TOKEN_BUDGET',
    help: 'Estimated tokens the prompt may use; the oldest turns are left out beyond it (the system prompt and the new message always stay).',
    sample: '16000',
  },
  {
    name: 'CHAT_MAX_OUTPUT_TOKENS',
    help: 'Most tokens the model may generate in one call.',
    sample: '4096',
  },
  {
    name: 'CHAT_TURN_WAIT_MS',
    help: "How long the chat worker holds a session for a running turn, so the session's next message waits for it.",
    sample: '600000',
  },
  {
    name: 'STREAM_FLUSH_INTERVAL_MS',
    help: 'Text deltas are coalesced into one event for at most this long (the first delta of a turn is sent at once).',
    sample: '50',
  },
  {
    name: 'STREAM_FLUSH_MAX_CHARS',
    help: 'A coalesced text event is sent as soon as it holds this many characters.',
    sample: '256',
  },
  {
    name: 'SSE_IDLE_TIMEOUT_MS',
    help: 'An SSE stream that receives no event for this long ends; the client reconnects with Last-Event-ID.',
    sample: '120000',
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
  LLM_EMBEDDING_DIMENSIONS: positiveInt(1536),
  LLM_MAX_RETRIES: positiveInt(3),
  LLM_TIMEOUT_MS: positiveInt(60_000),
  OFFLINE_MODEL_TTFT_MS: positiveInt(200),
  OFFLINE_MODEL_TOKENS_PER_SECOND: positiveInt(60),
  AUTH_MODE: optionalText.pipe(
    z.enum(['app-service', 'entra', 'dev'], { error: 'must be "app-service", "entra" or "dev"' }).optional(),
  ),
  AUTH_ENTRA_TENANT_ID: optionalText,
  AUTH_ENTRA_AUDIENCE: optionalText,
  AUTH_ENTRA_ISSUER: optionalUrl,
  AUTH_ENTRA_JWKS_URL: optionalUrl,
  /** Set by App Service when its authentication is on; principal headers can only be trusted then. */
  WEBSITE_AUTH_ENABLED: optionalText,
  CHAT_MAX_TEXT_CHARS: positiveInt(8_000),
  CHAT_MAX_TOOL_ROUNDS: positiveInt(10),
  CHAT_PROMPT_TOKEN_BUDGET: positiveInt(16_000),
  CHAT_MAX_OUTPUT_TOKENS: positiveInt(4_096),
  CHAT_TURN_WAIT_MS: positiveInt(600_000),
  STREAM_FLUSH_INTERVAL_MS: positiveInt(50),
  STREAM_FLUSH_MAX_CHARS: positiveInt(256),
  SSE_IDLE_TIMEOUT_MS: positiveInt(120_000),
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
  auth: AuthConfig;
  chat: {
    maxTextChars: number;
    maxToolRounds: number;
    promptTokenBudget: number;
    maxOutputTokens: number;
    turnWaitMs: number;
  };
  streaming: { flushIntervalMs: number; flushMaxChars: number; sseIdleTimeoutMs: number };
}

export type AuthConfig =
  | { mode: 'app-service' }
  | { mode: 'dev' }
  | { mode: 'entra'; tenantId: string; audiences: string[]; issuer: string; jwksUrl: string };

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

  const auth = authConfig(raw, problems);
  if (raw.CHAT_MAX_TEXT_CHARS < 1)
    problems.push({ setting: 'CHAT_MAX_TEXT_CHARS', problem: 'must be at least 1' });
  if (raw.CHAT_PROMPT_TOKEN_BUDGET < 256)
    problems.push({ setting: 'CHAT_PROMPT_TOKEN_BUDGET', problem: 'must be at least 256' });
  if (raw.CHAT_MAX_OUTPUT_TOKENS < 1)
    problems.push({ setting: 'CHAT_MAX_OUTPUT_TOKENS', problem: 'must be at least 1' });
  if (raw.STREAM_FLUSH_MAX_CHARS < 1)
    problems.push({ setting: 'STREAM_FLUSH_MAX_CHARS', problem: 'must be at least 1' });

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

  if (problems.length > 0 || connection === undefined || provider === undefined || auth === undefined)
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
    auth,
    chat: {
      maxTextChars: raw.CHAT_MAX_TEXT_CHARS,
      maxToolRounds: raw.CHAT_MAX_TOOL_ROUNDS,
      promptTokenBudget: raw.CHAT_PROMPT_TOKEN_BUDGET,
      maxOutputTokens: raw.CHAT_MAX_OUTPUT_TOKENS,
      turnWaitMs: raw.CHAT_TURN_WAIT_MS,
    },
    streaming: {
      flushIntervalMs: raw.STREAM_FLUSH_INTERVAL_MS,
      flushMaxChars: raw.STREAM_FLUSH_MAX_CHARS,
      sseIdleTimeoutMs: raw.SSE_IDLE_TIMEOUT_MS,
    },
  };
}

/** Which identities the app trusts. Principal headers are trusted only where the platform sets them. */
function authConfig(raw: RawSettings, problems: Problem[]): AuthConfig | undefined {
  const mode = raw.AUTH_MODE ?? (raw.APP_ENV === 'local' ? 'dev' : 'app-service');
  if (mode === 'dev') {
    if (raw.APP_ENV === 'azure') {
      problems.push({ setting: 'AUTH_MODE', problem: '"dev" identities exist only in the local runtime' });
      return undefined;
    }
    return { mode };
  }
  if (mode === 'app-service') {
    if (raw.APP_ENV === 'azure' && raw.WEBSITE_AUTH_ENABLED?.toLowerCase() !== 'true') {
      problems.push({
        setting: 'AUTH_MODE',
        problem:
          '"app-service" trusts the x-ms-client-principal headers, which only App Service authentication can vouch for, ' +
          'and it is off here (WEBSITE_AUTH_ENABLED is not True): turn it on, or use AUTH_MODE=entra',
      });
      return undefined;
    }
    return { mode };
  }
  const missing = (setting: keyof RawSettings) =>
    problems.push({ setting, problem: 'missing (AUTH_MODE is entra)' });
  if (raw.AUTH_ENTRA_TENANT_ID === undefined) missing('AUTH_ENTRA_TENANT_ID');
  const audiences = (raw.AUTH_ENTRA_AUDIENCE ?? '')
    .split(',')
    .map((audience) => audience.trim())
    .filter((audience) => audience !== '');
  if (audiences.length === 0) missing('AUTH_ENTRA_AUDIENCE');
  const tenantId = raw.AUTH_ENTRA_TENANT_ID;
  if (tenantId === undefined || audiences.length === 0) return undefined;
  if (!/^[A-Za-z0-9.-]{1,100}$/.test(tenantId)) {
    problems.push({ setting: 'AUTH_ENTRA_TENANT_ID', problem: 'must be a tenant id (GUID) or domain' });
    return undefined;
  }
  return {
    mode,
    tenantId,
    audiences,
    issuer: raw.AUTH_ENTRA_ISSUER ?? `https://login.microsoftonline.com/${tenantId}/v2.0`,
    jwksUrl: raw.AUTH_ENTRA_JWKS_URL ?? `https://login.microsoftonline.com/${tenantId}/discovery/v2.0/keys`,
  };
}
