// Which LLM endpoint the app calls, and how patiently (LLM_*, AZURE_OPENAI_*).
import {
  choiceSetting,
  defineSettings,
  intSetting,
  textSetting,
  urlSetting,
  type SettingProblems,
  type SettingValues,
} from '../settings/setting.js';
import { LLM_APIS, REASONING_EFFORTS, REASONING_SUMMARIES, type LlmConnection } from './llm-gateway.js';

export type LlmProvider = 'azure-openai' | 'openai-compatible' | 'offline';

export interface LlmConfig {
  provider: LlmProvider;
  connection: LlmConnection;
  maxRetries: number;
  timeoutMs: number;
  /** The length every embedding must have: the vector indexes were created with it. */
  embeddingDimensions: number;
}

const notForAzureOpenAi = {
  kind: 'never',
  reason: 'For LLM_PROVIDER=openai-compatible; Azure uses azure-openai.',
} as const;

export const llmSettings = defineSettings({
  LLM_PROVIDER: choiceSetting(['azure-openai', 'openai-compatible', 'offline'], {
    help:
      '"azure-openai", "openai-compatible" (OpenAI, Ollama, vLLM, llama.cpp, ...) or "offline" (the local ' +
      'stand-in, the default of the local runtime).',
    azure: { kind: 'bicep' },
  }),
  AZURE_OPENAI_ENDPOINT: urlSetting({
    help:
      'Azure OpenAI endpoint, e.g. https://<resource>.openai.azure.com; the app calls its v1 route (/openai/v1), ' +
      'which takes no api-version.',
    azure: { kind: 'bicep' },
  }),
  AZURE_OPENAI_CHAT_DEPLOYMENT: textSetting({
    help: 'Chat model deployment name.',
    azure: { kind: 'bicep' },
  }),
  AZURE_OPENAI_EMBEDDING_DEPLOYMENT: textSetting({
    help: 'Embedding model deployment name.',
    azure: { kind: 'bicep' },
  }),
  AZURE_OPENAI_API_KEY: textSetting({
    help: 'Optional key; leave it empty to use Entra ID (your az login locally, the managed identity in Azure).',
    azure: {
      kind: 'never',
      reason: 'Azure OpenAI is reached with the managed identity (local auth is disabled).',
    },
  }),
  LLM_BASE_URL: urlSetting({
    help: 'Base URL of an OpenAI-compatible API, e.g. https://api.openai.com/v1 or http://localhost:11434/v1.',
    azure: notForAzureOpenAi,
  }),
  LLM_API_KEY: textSetting({
    help: 'API key of the OpenAI-compatible endpoint (if it needs one).',
    azure: notForAzureOpenAi,
  }),
  LLM_CHAT_MODEL: textSetting({
    help: 'Chat model name at the OpenAI-compatible endpoint.',
    azure: notForAzureOpenAi,
  }),
  LLM_EMBEDDING_MODEL: textSetting({
    help: 'Embedding model name at the OpenAI-compatible endpoint.',
    azure: notForAzureOpenAi,
  }),
  LLM_API: choiceSetting(LLM_APIS, {
    default: 'chat-completions',
    help:
      'How chat turns and JSON output reach the model, with any LLM_PROVIDER: "chat-completions" or "responses" ' +
      '(the Responses API, which streams reasoning summaries). Embeddings always use /embeddings.',
    azure: { kind: 'default' },
  }),
  LLM_REASONING_EFFORT: choiceSetting(REASONING_EFFORTS, {
    help:
      'Reasoning effort asked of a reasoning model on chat turns (with LLM_API=responses also a summary of its ' +
      'reasoning, streamed to clients); leave it empty for models that do not reason: they refuse it.',
    azure: { kind: 'default' },
  }),
  LLM_REASONING_SUMMARY: choiceSetting(REASONING_SUMMARIES, {
    default: 'auto',
    help:
      'With LLM_API=responses and LLM_REASONING_EFFORT set: the reasoning summary asked for and streamed to ' +
      'clients; "off" asks for none (OpenAI gives summaries only to verified organisations and refuses the request ' +
      'otherwise).',
    azure: { kind: 'default' },
  }),
  LLM_EMBEDDING_DIMENSIONS: intSetting({
    default: 1536,
    min: 1,
    max: 4096,
    help:
      'Length of the embedding vectors the app stores; the Cosmos DB vector policies were created with it, so the ' +
      'embedding model must produce vectors of this length (text-embedding-3-small: 1536).',
    azure: { kind: 'bicep' },
  }),
  LLM_MAX_RETRIES: intSetting({
    default: 3,
    help: 'Retries of an LLM call on 429/5xx (retry-after is honoured).',
    azure: { kind: 'bicep' },
  }),
  LLM_TIMEOUT_MS: intSetting({
    default: 60_000,
    help: 'Timeout of one LLM request in milliseconds.',
    azure: { kind: 'bicep' },
  }),
});

/** The endpoint and its settings; reports what the chosen provider lacks. */
export function llmConfig(
  values: SettingValues<typeof llmSettings>,
  platform: { env: 'local' | 'azure'; managedIdentityClientId: string | undefined },
  problems: SettingProblems,
): LlmConfig | undefined {
  const { env } = platform;
  const provider = values.LLM_PROVIDER ?? (env === 'local' ? 'offline' : undefined);
  if (provider === undefined) {
    problems.add('LLM_PROVIDER', 'missing (say which LLM endpoint the app calls)');
    return undefined;
  }
  if (provider === 'offline' && env === 'azure')
    problems.add('LLM_PROVIDER', '"offline" is the local stand-in model and exists only locally');
  const require = (setting: keyof typeof values, value: string | undefined): string => {
    if (value === undefined) problems.add(setting, `missing (LLM_PROVIDER is ${provider})`);
    return value ?? '';
  };
  const style = {
    api: values.LLM_API,
    ...(values.LLM_REASONING_EFFORT !== undefined ? { reasoningEffort: values.LLM_REASONING_EFFORT } : {}),
    ...(values.LLM_REASONING_SUMMARY !== 'auto' ? { reasoningSummary: values.LLM_REASONING_SUMMARY } : {}),
  };
  const connection: LlmConnection =
    provider === 'azure-openai'
      ? {
          ...style,
          kind: 'azure-openai',
          endpoint: require('AZURE_OPENAI_ENDPOINT', values.AZURE_OPENAI_ENDPOINT),
          chatDeployment: require('AZURE_OPENAI_CHAT_DEPLOYMENT', values.AZURE_OPENAI_CHAT_DEPLOYMENT),
          embeddingDeployment: require('AZURE_OPENAI_EMBEDDING_DEPLOYMENT', values.AZURE_OPENAI_EMBEDDING_DEPLOYMENT),
          apiKey: values.AZURE_OPENAI_API_KEY,
          managedIdentityClientId: platform.managedIdentityClientId,
        }
      : {
          ...style,
          // The local runtime points LLM_BASE_URL at its offline model before it loads the settings.
          kind: 'openai-compatible',
          baseUrl: require('LLM_BASE_URL', values.LLM_BASE_URL),
          apiKey: values.LLM_API_KEY,
          chatModel: require('LLM_CHAT_MODEL', values.LLM_CHAT_MODEL),
          embeddingModel: require('LLM_EMBEDDING_MODEL', values.LLM_EMBEDDING_MODEL),
        };
  return {
    provider,
    connection,
    maxRetries: values.LLM_MAX_RETRIES,
    timeoutMs: values.LLM_TIMEOUT_MS,
    embeddingDimensions: values.LLM_EMBEDDING_DIMENSIONS,
  };
}
