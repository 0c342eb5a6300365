// A crash never shows twice, through the AI SDK's own Chat: the built runtime is SIGKILLed while the Chat reads an
// answer the chat worker streams itself, started again, and the Chat resumes; its message ends as the stored answer.
import { DefaultChatTransport } from 'ai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeChat, textOf, type UiChatMessage } from '../support/ai-sdk-chat.js';
import { DEV_IDENTITY_HEADER } from '../support/chat-client.js';
import { buildRuntime, CrashableRuntime, sleep } from '../support/crashable-runtime.js';
import { FileInstanceStore } from '../../local/durable/file-instance-store.js';
import { CHAT_TURN_ORCHESTRATION } from '../../shared/chat/contracts/activities.js';

/** An answer of 200 words takes the offline model about 5 s at this pace: time to kill it mid-answer. */
const SETTINGS = {
  OFFLINE_MODEL_TTFT_MS: '200',
  OFFLINE_MODEL_TOKENS_PER_SECOND: '40',
  CHAT_FIRST_ROUND: 'worker',
};
const USER = 'user_001';

async function waitUntil(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen in ${timeoutMs} ms`);
    await sleep(25);
  }
}

describe('a useChat reader across a crash of the runtime', () => {
  let entry: string;
  let folder: string;
  let runtime: CrashableRuntime | undefined;

  beforeAll(() => {
    entry = buildRuntime();
  }, 600_000);
  afterAll(async () => {
    await runtime?.kill();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it('ends showing exactly the stored answer after a kill mid-answer and a resume', async () => {
    folder = await mkdtemp(join(tmpdir(), 'ui-chat-crash-'));
    const crashable = new CrashableRuntime({
      entry,
      cwd: folder,
      dataDir: join(folder, 'data'),
      settings: SETTINGS,
      startTimeoutMs: 120_000,
    });
    runtime = crashable;
    await crashable.start();
    const url = () => {
      if (!crashable.url) throw new Error('the runtime has no URL');
      return crashable.url;
    };
    const transport = new DefaultChatTransport<UiChatMessage>({
      api: `${url()}/api/ui/chat`,
      headers: { [DEV_IDENTITY_HEADER]: USER },
    });
    const chat = new NodeChat('crashCht0000Ab12', transport);

    const sending = chat.sendMessage({ text: 'reply with 200 words about the sea' });
    // Mid-answer: some text shown, far from all of it.
    await waitUntil(() => textOf(chat.messages[1]).split(' ').length >= 15, 'the first words');
    const shownBeforeCrash = textOf(chat.messages[1]);
    await crashable.kill();
    await sending;
    expect(chat.status).toBe('error');
    const turn = chat.messages[0]?.id ?? '';

    await crashable.start();
    // useChat({ resume: true }) on the reloaded page, or after the error: the running turn replayed from its start.
    await chat.resumeStream();
    expect(chat.error).toBeUndefined();
    expect(chat.messages).toHaveLength(2);
    expect(chat.messages[1]?.id).toBe(`${turn}_assistant`);
    const shown = textOf(chat.messages[1]);

    // The stored answer, as the history API serves it once the history worker has it.
    let stored: string | undefined;
    await waitUntil(async () => {
      const response = await fetch(`${url()}/api/history/conversations/${chat.id}`, {
        headers: { [DEV_IDENTITY_HEADER]: USER },
      });
      if (response.status !== 200) return false;
      const conversation = (await response.json()) as { messages: { messageId: string; content: string }[] };
      stored = conversation.messages.find((message) => message.messageId === `${turn}_assistant`)?.content;
      return stored !== undefined;
    }, 'the answer in history');
    expect(shown).toBe(stored);
    expect(shown.length).toBeGreaterThan(shownBeforeCrash.length);
    // The kill did void streamed text: the turn's own log has a discard, which the resumed reader never showed.
    const log = await fetch(`${url()}/api/stream/${chat.id}/${turn}`, {
      headers: { [DEV_IDENTITY_HEADER]: USER },
    });
    expect(await log.text()).toContain('event: discard');
    expect(chat.messages[1]?.metadata?.finishReason).toBe('stop');
    await crashable.stop();
    // The chat worker streamed round 0 itself (CHAT_FIRST_ROUND=worker): the kill left no orchestration to go on,
    // so the answer was finished by the redelivered message running the round again, and none was ever started.
    const instances = await FileInstanceStore.open(join(folder, 'data', 'durable.json'));
    try {
      expect((await instances.list()).map((instance) => instance.name)).not.toContain(
        CHAT_TURN_ORCHESTRATION,
      );
    } finally {
      await instances.close();
    }
  }, 300_000);
});
