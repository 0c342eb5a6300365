// Builds the openai SDK client for a connection: OpenAI for any OpenAI-compatible endpoint, AzureOpenAI
// (deployments route, api-key or Entra ID) for Azure. Every setting comes from the connection, never the environment.
import OpenAI, { AzureOpenAI } from 'openai';
import { LlmError } from './llm-errors.js';
import type { LlmConnection, LlmGatewayOptions } from './llm-gateway.js';

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
  const tokenProvider =
    options.azureAdTokenProvider ??
    defaultAzureTokenProvider(connection.endpoint, connection.managedIdentityClientId);
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
 * DefaultAzureCredential behind the SDK's token-provider hook. @azure/identity is loaded on first use so a
 * local runtime that never talks to Azure does not pay for it; tokens are cached and refreshed by identity.
 */
function defaultAzureTokenProvider(
  endpoint: string,
  managedIdentityClientId?: string,
): () => Promise<string> {
  let provider: Promise<() => Promise<string>> | undefined;
  return async () => {
    provider ??= import('@azure/identity').then(({ DefaultAzureCredential, getBearerTokenProvider }) =>
      getBearerTokenProvider(
        new DefaultAzureCredential(managedIdentityClientId ? { managedIdentityClientId } : {}),
        AZURE_COGNITIVE_SERVICES_SCOPE,
      ),
    );
    try {
      return await (
        await provider
      )();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new LlmError(
        `Could not get an Entra ID token for Azure OpenAI ${endpoint}: ${message} ` +
          'Locally, sign in with `az login`; in Azure, give the app a managed identity' +
          (managedIdentityClientId ? ` (client id ${managedIdentityClientId})` : '') +
          ' with the "Cognitive Services OpenAI User" role, or configure an API key.',
        { retryable: false },
        { cause: error },
      );
    }
  };
}
