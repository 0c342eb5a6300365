// What the end-to-end tests of assistants, projects, scoped memory and tools share: a user's JSON calls to a running
// runtime's API, one turn run to its end, and what the scripted model was sent for a turn.
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { ChatClient } from './chat-client.js';
import type { ChatCompletionRequest, ScriptedModel } from './scripted-model.js';

/** `method /api/{path}` as `client`, with `body` as JSON when one is given. */
export function callApi(
  runtime: { url: string },
  client: ChatClient,
  method: string,
  path: string,
  body?: unknown,
): Promise<Response> {
  return fetch(`${runtime.url}/api/${path}`, {
    method,
    headers: client.headers(body === undefined ? {} : { 'content-type': 'application/json' }),
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

/** The response's JSON, once its status is the one expected (its body says why when it is not). */
export async function json<T>(response: Response, status: number): Promise<T> {
  expect(response.status, await response.clone().text()).toBe(status);
  return (await response.json()) as T;
}

/** A new conversation of the client's, shaped as `shape` asks (POST /api/session/start); its sessionId. */
export async function startConversation(
  runtime: { url: string },
  client: ChatClient,
  shape: Record<string, unknown> = {},
): Promise<string> {
  return (
    await json<{ sessionId: string }>(await callApi(runtime, client, 'POST', 'session/start', shape), 201)
  ).sessionId;
}

/** Posts `text` in the session and reads the turn's stream, which must end with `message-end`. */
export async function runTurn(client: ChatClient, sessionId: string, text: string): Promise<void> {
  const chatMessageId = randomUUID();
  expect((await client.post({ sessionId, chatMessageId, text })).status).toBe(202);
  const frames = await client.stream(sessionId, chatMessageId);
  expect(frames.at(-1)?.data.type).toBe('message-end');
}

/** The requests the model streamed for the turn that asked `text` (its rounds), in order. */
export function roundsFor(model: ScriptedModel, text: string): ChatCompletionRequest[] {
  return model.requests.filter(
    (request) =>
      request.stream === true && request.messages.findLast((m) => m.role === 'user')?.content === text,
  );
}

/** The system prompt the model was sent with the turn that asked `text`. */
export function systemPromptFor(model: ScriptedModel, text: string): string | null | undefined {
  return roundsFor(model, text)[0]?.messages.find((message) => message.role === 'system')?.content;
}
