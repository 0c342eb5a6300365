// `npm run bench:openai`: time to the first token through POST /api/v1/chat/completions (streamed, read by the openai
// package) beside POST /api/chat + its SSE stream, turn for turn in one session of one local runtime (and stateless
// requests beside them). Prints the medians and their ratio; it asserts nothing about speed.
import OpenAI from 'openai';
import { loadavg } from 'node:os';
import { createLogHandler } from '../local/log.js';
import { startLocalRuntime } from '../local/runtime.js';
import { ChatApi } from './chat-clients.js';
import { percentile, ratio, round } from './figures.js';

const TURNS = Number(process.env.TURNS ?? 20);
/** The offline model's pace: a first token after this long, then this many tokens a second. */
const TTFT_MS = process.env.OFFLINE_MODEL_TTFT_MS ?? '200';
const TOKENS_PER_SECOND = process.env.OFFLINE_MODEL_TOKENS_PER_SECOND ?? '60';
const USER = 'user_001';

async function completionTurn(client: OpenAI, model: string, text: string): Promise<number> {
  const posted = performance.now();
  const stream = await client.chat.completions.create({
    model,
    messages: [{ role: 'user', content: text }],
    stream: true,
  });
  let first: number | undefined;
  // Read to the end, as the SSE turn is: the next turn of the session starts after this one.
  for await (const chunk of stream)
    if (first === undefined && (chunk.choices[0]?.delta.content ?? '') !== '') first = performance.now();
  if (first === undefined) throw new Error('the completion streamed no content');
  return first - posted;
}

function summary(name: string, values: number[]): string {
  return `${name}: p50 ${round(percentile(values, 50))} ms, p90 ${round(percentile(values, 90))} ms`;
}

async function main(): Promise<void> {
  const runtime = await startLocalRuntime({
    port: 0,
    dataDir: undefined,
    settings: { OFFLINE_MODEL_TTFT_MS: TTFT_MS, OFFLINE_MODEL_TOKENS_PER_SECOND: TOKENS_PER_SECOND },
    logHandler: createLogHandler('critical'),
  });
  try {
    const api = new ChatApi(runtime.url);
    const sessionId = await api.startSession(USER);
    // The same session for both: x-conversation-id continues it, with its history as the context.
    const client = new OpenAI({
      baseURL: `${runtime.url}/api/v1`,
      apiKey: 'not-used-by-dev-identities',
      defaultHeaders: { 'x-ms-client-principal-id': USER, 'x-conversation-id': sessionId },
      maxRetries: 0,
    });
    // And stateless, as most OpenAI clients call: each request a new temporary conversation.
    const stateless = new OpenAI({
      baseURL: `${runtime.url}/api/v1`,
      apiKey: 'not-used-by-dev-identities',
      defaultHeaders: { 'x-ms-client-principal-id': USER },
      maxRetries: 0,
    });
    const model = runtime.app.config.models.defaultModel;
    const overSse: number[] = [];
    const overCompletions: number[] = [];
    const overStateless: number[] = [];
    // A warm-up turn of each kind, not counted: the first pays for connections and compilation.
    await api.firstContentMs(USER, sessionId, 'Hello!');
    await completionTurn(client, model, 'Hello!');
    await completionTurn(stateless, model, 'Hello!');
    for (let turn = 1; turn <= TURNS; turn += 1) {
      // Alternated, so both see the same machine load and the same growing conversation.
      overSse.push(await api.firstContentMs(USER, sessionId, `Question ${turn}: what is ${turn} + ${turn}?`));
      overCompletions.push(
        await completionTurn(client, model, `Question ${turn}: what is ${turn} * ${turn}?`),
      );
      overStateless.push(
        await completionTurn(stateless, model, `Question ${turn}: what is ${turn} - ${turn}?`),
      );
    }
    const sseMedian = percentile(overSse, 50);
    const completionsMedian = percentile(overCompletions, 50);
    console.log(
      `First token over ${TURNS} turns of each, one session (offline model: first token after ${TTFT_MS} ms, ` +
        `${TOKENS_PER_SECOND} tokens/s; load average ${loadavg()
          .map((load) => load.toFixed(1))
          .join(', ')}):`,
    );
    console.log(`  ${summary('POST /api/chat → first content event over SSE', overSse)}`);
    console.log(
      `  ${summary('POST /api/v1/chat/completions (stream) → first content chunk', overCompletions)}`,
    );
    console.log(`  ${summary('the same, stateless (a new temporary conversation each)', overStateless)}`);
    console.log(
      `  added by /api/v1 at the median: ${round(completionsMedian - sseMedian)} ms ` +
        `(ratio ${ratio(completionsMedian, sseMedian) ?? 'n/a'}); stateless: ` +
        `${round(percentile(overStateless, 50) - sseMedian)} ms (ratio ${ratio(percentile(overStateless, 50), sseMedian) ?? 'n/a'})`,
    );
  } finally {
    await runtime.stop();
  }
}

await main();
