// Builds the openai SDK client for a connection: OpenAI for any OpenAI-compatible endpoint, AzureOpenAI
// (deployments route, api-key or Entra ID tokens from the app's credential) for Azure. Every setting comes from
// the connection and the options, never the environment.
import { getBearerTokenProvider, type TokenCredential } from '@azure/identity';
import OpenAI, { AzureOpenAI } from 'openai';
import { LlmError, type LlmConnection, type LlmGatewayOptions } from '../llm-gateway.js';

export const AZURE_COGNITIVE_SERVICES_SCOPE = 'https://cognitiveservices.azure.com/.default';

/** Ollama, vLLM and llama.cpp need no key, but the SDK refuses to start without one. */
const PLACEHOLDER_API_KEY = 'no-key-configured';

export function createOpenAiClient(connection: LlmConnection, options: LlmGatewayOptions): OpenAI {
  const common = {
    maxRetries: options.maxRetries,
    timeout: options.timeoutMs,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  };
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
  if (connection.apiKey) {
    return new AzureOpenAI({
      ...common,
      baseURL,
      apiVersion: connection.apiVersion,
      apiKey: connection.apiKey,
    });
  }
  const tokenProvider = options.azureAdTokenProvider;
  if (tokenProvider === undefined)
    throw new LlmError(
      `Azure OpenAI ${connection.endpoint} has no API key and the app was given no Azure credential for Entra ID.`,
      { retryable: false },
    );
  return new AzureOpenAI({
    ...common,
    baseURL,
    apiVersion: connection.apiVersion,
    azureADTokenProvider: tokenProvider,
    // null stops the SDK falling back to AZURE_OPENAI_API_KEY, which it would then reject as conflicting.
    apiKey: null as unknown as undefined,
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
