// Builds the openai SDK client for a connection: any OpenAI-compatible endpoint as configured, and Azure OpenAI on
// its GA v1 route (`{endpoint}/openai/v1`, no api-version), with its API key or Entra ID tokens from the app's
// credential. Every setting comes from the connection and the options, never the environment.
import { getBearerTokenProvider, type TokenCredential } from '@azure/identity';
import OpenAI from 'openai';
import { LlmError, type LlmConnection, type LlmGatewayOptions } from '../llm-gateway.js';

export const AZURE_COGNITIVE_SERVICES_SCOPE = 'https://cognitiveservices.azure.com/.default';

/** Ollama, vLLM and llama.cpp need no key, but the SDK refuses to start without one. */
const PLACEHOLDER_API_KEY = 'no-key-configured';

/** What every client of the app shares: its retries, timeout and (in tests) scripted fetch. */
function commonOptions(options: LlmGatewayOptions) {
  return {
    maxRetries: options.maxRetries,
    timeout: options.timeoutMs,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  };
}

/** How an Azure OpenAI client signs in: its API key, else Entra ID tokens from the app's credential. */
function azureSignIn(
  connection: Extract<LlmConnection, { kind: 'azure-openai' }>,
  options: LlmGatewayOptions,
): { apiKey: string } | { tokenProvider: () => Promise<string> } {
  if (connection.apiKey) return { apiKey: connection.apiKey };
  if (options.azureAdTokenProvider !== undefined) return { tokenProvider: options.azureAdTokenProvider };
  throw new LlmError(
    `Azure OpenAI ${connection.endpoint} has no API key and the app was given no Azure credential for Entra ID.`,
    { retryable: false },
  );
}

/**
 * The one client of a connection: chat completions, the Responses API, embeddings and the models list all go through
 * it. For Azure it is the plain OpenAI client on the v1 route `{endpoint}/openai/v1/`, where the model is the
 * deployment name and no api-version is sent: Microsoft documents that route, generally available, for the OpenAI
 * client (https://learn.microsoft.com/azure/ai-foundry/openai/api-version-lifecycle: `new OpenAI({ baseURL:
 * "https://YOUR-RESOURCE-NAME.openai.azure.com/openai/v1/", apiKey })`, an Entra ID token provider taking the API
 * key's place). The SDK calls a function apiKey before each request (`_callApiKey` in node_modules/openai/src/
 * client.ts), so tokens are refreshed. The recorded Azure v1 streams in test/fixtures/llm-wire were sent to that route.
 */
export function createOpenAiClient(connection: LlmConnection, options: LlmGatewayOptions): OpenAI {
  const common = commonOptions(options);
  if (connection.kind === 'openai-compatible') {
    return new OpenAI({
      ...common,
      baseURL: connection.baseUrl,
      apiKey: connection.apiKey || PLACEHOLDER_API_KEY,
      // null, not undefined: undefined would let the SDK read OPENAI_ORG_ID / OPENAI_PROJECT_ID.
      organization: null,
      project: null,
    });
  }
  const signIn = azureSignIn(connection, options);
  return new OpenAI({
    ...common,
    // Passing baseURL keeps an OPENAI_BASE_URL in the environment out of it.
    baseURL: `${connection.endpoint.replace(/\/+$/, '')}/openai/v1`,
    apiKey: 'apiKey' in signIn ? signIn.apiKey : signIn.tokenProvider,
    organization: null,
    project: null,
  });
}

/**
 * Bearer tokens for Azure OpenAI from the app's one Azure credential (its managed identity in Azure, the
 * developer's `az login` locally); a failure says how to fix it. Tokens are cached and refreshed by identity.
 */
export function azureOpenAiTokenProvider(
  credential: TokenCredential,
  connection: { endpoint: string; managedIdentityClientId?: string | undefined },
): () => Promise<string> {
  const getToken = getBearerTokenProvider(credential, AZURE_COGNITIVE_SERVICES_SCOPE);
  return async () => {
    try {
      return await getToken();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const clientId = connection.managedIdentityClientId;
      throw new LlmError(
        `Could not get an Entra ID token for Azure OpenAI ${connection.endpoint}: ${message} ` +
          'Locally, sign in with `az login`; in Azure, give the app a managed identity' +
          (clientId ? ` (client id ${clientId})` : '') +
          ' with the "Cognitive Services OpenAI User" role, or configure an API key.',
        { retryable: false },
        { cause: error },
      );
    }
  };
}
