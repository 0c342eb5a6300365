// The benchmark's baseline, the simplest serverless chat sample: one HTTP function that calls the model through
// the app's own LlmGateway (its config, its openai client) and streams each text delta straight back as SSE: no
// queue, no orchestration, no store. Added to the bench's runtime only, never to the product's function table.
import type { HttpRequest, HttpResponseInit } from '@azure/functions';
import { z } from 'zod';
import type { HttpFunctionDefinition } from '../functions/definition.js';
import { getApp } from '../shared/app/app.js';
import { BASIC_SYSTEM_PROMPT } from '../shared/chat/prompt.js';

export const DIRECT_CHAT_ROUTE = 'bench/direct-chat';

const bodySchema = z.object({ text: z.string().min(1).max(4000) });

export const directChatFunction: HttpFunctionDefinition = {
  kind: 'http',
  name: 'benchDirectChat',
  route: DIRECT_CHAT_ROUTE,
  methods: ['POST'],
  handler: directChat,
};

async function directChat(request: HttpRequest): Promise<HttpResponseInit> {
  const parsed = bodySchema.safeParse(await request.json().catch(() => undefined));
  if (!parsed.success) return { status: 400, jsonBody: { title: 'A body { text } is required.' } };
  const { llm } = (await getApp()).chat.turn;
  const encoder = new TextEncoder();
  let seq = 0;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const send = (event: Record<string, unknown>) =>
        controller.enqueue(encoder.encode(`data: ${JSON.stringify({ ...event, seq: ++seq })}\n\n`));
      const messages = [
        { role: 'system' as const, content: BASIC_SYSTEM_PROMPT },
        { role: 'user' as const, content: parsed.data.text },
      ];
      llm
        .streamChat({ messages }, (delta) => {
          if (delta.type === 'content') send({ type: 'content', delta: delta.text });
        })
        .then(
          (reply) => send({ type: 'message-end', usage: reply.usage }),
          (error: unknown) => send({ type: 'error', message: String(error) }),
        )
        .finally(() => controller.close());
    },
  });
  return { status: 200, headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' }, body };
}
