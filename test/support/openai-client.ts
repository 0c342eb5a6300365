// What the e2e tests of the OpenAI-compatible API share: the local runtime behind a scripted model, the official
// `openai` package as a dev user's client of its /api/v1, and the last user message of a request the model got.
import OpenAI from 'openai';
import type { LocalRuntime } from '../../local/runtime.js';
import { DEV_IDENTITY_HEADER } from './chat-client.js';
import { startTestRuntime } from './local-runtime.js';
import { startScriptedModel, type ChatCompletionRequest, type ScriptedModel } from './scripted-model.js';

/** The text of the request's last user message ('' when it has none). */
export const lastUser = (request: ChatCompletionRequest) =>
  request.messages.findLast((message) => message.role === 'user')?.content ?? '';

/** The local runtime with the scripted model answering its turns. */
export async function startOpenAiRuntime(
  script: Parameters<typeof startScriptedModel>[0],
): Promise<{ runtime: LocalRuntime; model: ScriptedModel }> {
  const model = await startScriptedModel(script);
  try {
    return { runtime: await startTestRuntime({ settings: model.settings }), model };
  } catch (error) {
    await model.close();
    throw error;
  }
}

/** The `openai` package as the dev user `userId`, sending `headers` with every request, never retrying. */
export function devOpenAiClient(
  runtime: LocalRuntime,
  userId = 'user_001',
  headers: Record<string, string> = {},
): OpenAI {
  return new OpenAI({
    baseURL: `${runtime.url}/api/v1`,
    apiKey: 'not-used-by-dev-identities',
    defaultHeaders: { [DEV_IDENTITY_HEADER]: userId, ...headers },
    maxRetries: 0,
  });
}
