// Builds the openai SDK clients for a connection: OpenAI for any OpenAI-compatible endpoint, AzureOpenAI
// (deployments route, api-key or Entra ID tokens from the app's credential) for Azure, and for Azure's Responses
// API the plain OpenAI client on the v1 route. Every setting comes from the connection and the options, never the
// environment.
import { getBearerTokenProvider, type TokenCredential } from '@azure/identity';
import OpenAI, { AzureOpenAI } from 'openai';
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
  // Passing baseURL (not endpoint) keeps an OPENAI_BASE_URL in the environment from conflicting with it.
  // Without a deployment option the SDK routes each call to /deployments/{model}, so one client serves both
  // the chat and the embedding deployment.
  const baseURL = `${connection.endpoint.replace(/\/+$/, '')}/openai`;
  const signIn = azureSignIn(connection, options);
  if ('apiKey' in signIn) {
    return new AzureOpenAI({
      ...common,
      baseURL,
      apiVersion: connection.apiVersion,
      apiKey: signIn.apiKey,
    });
  }
  return new AzureOpenAI({
    ...common,
    baseURL,
    apiVersion: connection.apiVersion,
    azureADTokenProvider: signIn.tokenProvider,
    // null stops the SDK falling back to AZURE_OPENAI_API_KEY, which it would then reject as conflicting.
    apiKey: null as unknown as undefined,
  });
}

/**
 * The client the Responses API is called with. For an OpenAI-compatible endpoint it is the chat client itself.
 * For Azure it is the plain OpenAI client on the v1 route `{endpoint}/openai/v1/`, with no api-version: AzureOpenAI
 * sends `/responses` to `{baseURL}/responses?api-version=…` (only its deployment-style paths, chat completions and
 * embeddings among them, go through /deployments: node_modules/openai/src/azure.ts `_deployments_endpoints`), and
 * Microsoft documents the v1 route, where an api-version is no longer needed, for the Responses API with the
 * OpenAI client: an Entra ID token provider goes in `apiKey`, which the SDK calls before each request
 * (`_callApiKey` in node_modules/openai/src/client.ts). See
 * https://learn.microsoft.com/azure/ai-foundry/openai/api-version-lifecycle and MicrosoftDocs/azure-ai-docs
 * articles/ai-foundry/openai/includes/language-overview/javascript.md ("Responses": `new OpenAI({ baseURL:
 * "https://YOUR-RESOURCE-NAME.openai.azure.com/openai/v1/", apiKey: tokenProvider })`, then `responses.create`).
 * The recorded Azure Responses streams in test/fixtures/llm-wire were sent to that route.
 */
export function createOpenAiResponsesClient(
  connection: LlmConnection,
  options: LlmGatewayOptions,
  chatClient: OpenAI,
): OpenAI {
  if (connection.kind === 'openai-compatible') return chatClient;
  const signIn = azureSignIn(connection, options);
  return new OpenAI({
    ...commonOptions(options),
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
  connection: { endpoint: string; managedIdentityClientId?: string },
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
