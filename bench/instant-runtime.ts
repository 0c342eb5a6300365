// The local runtime the attachment benches measure, and their calls to it: in-process, App Service identities, an
// offline model that answers at once (the figures are the stores' and the pipeline's, not the model's).
import { randomUUID } from 'node:crypto';
import { createLogHandler } from '../local/log.js';
import { startLocalRuntime, type LocalRuntime } from '../local/runtime.js';
import { TurnTrace, type ChatApi } from './chat-clients.js';

const TURN_TIMEOUT_MS = 60_000;

export function startInstantRuntime(): Promise<LocalRuntime> {
  return startLocalRuntime({
    port: 0,
    dataDir: undefined,
    settings: {
      AUTH_MODE: 'app-service',
      OFFLINE_MODEL_TTFT_MS: '0',
      OFFLINE_MODEL_TOKENS_PER_SECOND: '0',
    },
    logHandler: createLogHandler('error'),
  });
}

/** App Service authentication's headers for a signed-in user (AUTH_MODE=app-service), as the chat clients send. */
export const headers = (userId: string) => ({
  'x-ms-client-principal-id': userId,
  'x-ms-client-principal': Buffer.from(
    JSON.stringify({ auth_typ: 'aad', claims: [{ typ: 'oid', val: userId }] }),
  ).toString('base64'),
});

/** Uploads one file as the user; the attachment the service answers. */
export async function upload(
  runtime: LocalRuntime,
  userId: string,
  name: string,
  type: string,
  bytes: Buffer,
) {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(bytes)], { type }), name);
  const response = await fetch(`${runtime.url}/api/attachments`, {
    method: 'POST',
    headers: headers(userId),
    body: form,
  });
  if (!response.ok) throw new Error(`upload: ${response.status} ${await response.text()}`);
  return (await response.json()) as { attachmentId: string; size: number; width?: number; height?: number };
}

/** One turn with these attachments: ms from the POST to its first content event. */
export async function firstToken(
  runtime: LocalRuntime,
  api: ChatApi,
  turn: { userId: string; sessionId: string; text: string; attachments: string[] },
): Promise<number> {
  const { userId, sessionId, text, attachments } = turn;
  const chatMessageId = randomUUID();
  const started = performance.now();
  const response = await fetch(`${runtime.url}/api/chat`, {
    method: 'POST',
    headers: { ...headers(userId), 'content-type': 'application/json' },
    body: JSON.stringify({
      sessionId,
      chatMessageId,
      text,
      ...(attachments.length === 0 ? {} : { attachments }),
    }),
  });
  if (response.status !== 202) throw new Error(`chat: ${response.status} ${await response.text()}`);
  const trace = new TurnTrace();
  await api.readStream(userId, new URL(`/api/stream/${sessionId}/${chatMessageId}`, runtime.url).href, trace);
  await trace.finished(TURN_TIMEOUT_MS, chatMessageId);
  if (trace.errors.length > 0 || trace.firstContentAt === undefined)
    throw new Error(`turn failed: ${trace.errors.join('; ') || 'no content'}`);
  return trace.firstContentAt - started;
}
