// The health probe of the LLM endpoint: its models list, then whether the route chat turns use exists. Never
// throws and never retries: /api/health must answer quickly whatever the endpoint does.
import { APIError } from 'openai';
import { errorContext, notOpenAiShaped, type OpenAiEndpoint } from './openai-endpoint.js';
import { toLlmError } from './openai-errors.js';

const PROBE_TIMEOUT_MS = 5_000;

export async function probe(endpoint: OpenAiEndpoint): Promise<{ ok: boolean; detail: string }> {
  let reachable: string;
  try {
    const page = await endpoint.client.models.list({
      maxRetries: 0,
      timeout: Math.min(endpoint.options.timeoutMs, PROBE_TIMEOUT_MS),
    });
    if (!Array.isArray((page as Partial<typeof page>).data)) throw notOpenAiShaped(endpoint, 'models list');
    const ids = page.data.map((model) => model.id);
    if (endpoint.connection.kind === 'azure-openai') {
      reachable = `${endpoint.name} is reachable (${ids.length} models available).`;
    } else {
      const listed = ids.includes(endpoint.chatModel) ? 'is listed' : 'is not listed (it may still resolve)';
      reachable = `${endpoint.name} is reachable; chat model "${endpoint.chatModel}" ${listed}.`;
    }
  } catch (error) {
    return { ok: false, detail: toLlmError(error, errorContext(endpoint, endpoint.chatModel)).message };
  }
  const route = await probeRoute(endpoint);
  return route === undefined ? { ok: true, detail: reachable } : { ok: false, detail: route };
}

/**
 * Whether the route chat turns use exists: a server can list its models and still lack `/responses` (or
 * `/chat/completions`). The probe posts a body without the input every server requires, so a server with the
 * route refuses it (400/422) without generating anything, while one without it answers 404 (or 405). On Azure's
 * deployments route the chat deployment is named, so a missing deployment is a 404 too.
 */
async function probeRoute(endpoint: OpenAiEndpoint): Promise<string | undefined> {
  const responses = endpoint.responsesClient;
  const path = responses ? '/responses' : '/chat/completions';
  const api = responses ? 'LLM_API=responses' : 'LLM_API=chat-completions';
  try {
    await (responses ?? endpoint.client).post(path, {
      body: responses ? {} : { model: endpoint.chatModel },
      maxRetries: 0,
      timeout: Math.min(endpoint.options.timeoutMs, PROBE_TIMEOUT_MS),
    });
    return undefined;
  } catch (error) {
    if (error instanceof APIError && (error.status === 400 || error.status === 422)) return undefined;
    if (error instanceof APIError && (error.status === 404 || error.status === 405))
      return (
        `${endpoint.name} has no ${path} route (POST answered ${error.status}), which ${api} calls on every ` +
        'turn: ' +
        (responses
          ? 'use a server with the Responses API or set LLM_API=chat-completions.'
          : 'check the base URL (and on Azure the chat deployment name).')
      );
    return `${api}: ${toLlmError(error, errorContext(endpoint, endpoint.chatModel)).message}`;
  }
}
