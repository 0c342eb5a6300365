// Long-term memory follows the branch the user keeps, end to end over the local runtime with a scripted
// model: facts from edited-away messages are withdrawn, and come back when the user switches back.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRuntime } from '../../local/runtime.js';
import { ChatClient, expectStatus, type RealtimeListener } from '../support/chat-client.js';
import { settle, startTestRuntime } from '../support/local-runtime.js';
import {
  startScriptedModel,
  type ChatCompletionRequest,
  type ScriptedModel,
  type ScriptedReply,
} from '../support/scripted-model.js';

interface ProfileInput {
  userMessage: string;
  activeFacts: { factId: string; statement: string }[];
}

interface SummaryInput {
  previousSummary: { summary: string } | null;
  exchange: { userMessage: string };
}

function structured(request: ChatCompletionRequest): object {
  const name = request.response_format?.json_schema?.name;
  const content = request.messages.at(-1)?.content ?? '{}';
  if (name === 'memory_profile_changes') {
    const input = JSON.parse(content) as ProfileInput;
    const loves = /I love (\w+)\./.exec(input.userMessage);
    const statement = loves ? `The user loves ${loves[1]}.` : undefined;
    const add =
      statement && !input.activeFacts.some((fact) => fact.statement === statement)
        ? [{ category: 'interests', statement, evidence: loves![0] }]
        : [];
    return { add, reaffirm: [], replace: [], retract: [] };
  }
  if (name === 'conversation_summary') {
    const input = JSON.parse(content) as SummaryInput;
    const summary = [input.previousSummary?.summary ?? '', `The user said: ${input.exchange.userMessage}`]
      .join(' ')
      .trim();
    return { summary, themes: ['chat'], persons: [], places: [], user_sentiment: 'positive' };
  }
  if (name === 'exchange_index') return { line: 'Q', tags: ['chat'] };
  if (name === 'session_summary') return { summary: 'Earlier turns.' };
  throw new Error(`unexpected structured request ${String(name)}`);
}

describe('long-term memory along branches', () => {
  let model: ScriptedModel;
  let runtime: LocalRuntime;
  let alice: ChatClient;
  let live: RealtimeListener;

  beforeAll(async () => {
    model = await startScriptedModel((request): ScriptedReply =>
      request.stream === true ? { content: 'Noted.' } : { content: JSON.stringify(structured(request)) },
    );
    runtime = await startTestRuntime({ settings: model.settings });
    alice = new ChatClient(runtime.url, 'user_001');
    live = await alice.listen();
  });
  afterAll(async () => {
    live?.stop();
    await runtime?.stop();
    await model?.close();
  });

  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${runtime.url}/api/${path}`, {
      ...init,
      headers: alice.headers({ 'content-type': 'application/json' }),
    });

  async function ask(sessionId: string, text: string, extra: Record<string, unknown> = {}): Promise<string> {
    const chatMessageId = randomUUID();
    await expectStatus(await alice.post({ sessionId, chatMessageId, text, ...extra }), 202);
    expect((await live.waitForTerminal(chatMessageId)).at(-1)).toMatchObject({ type: 'message-end' });
    await settle(runtime);
    return chatMessageId;
  }

  async function memory(sessionId: string) {
    const body = await expectStatus<{
      facts: { statement: string; provenance: { chatMessageId: string }[] }[];
      summaries: { sessionId: string; summary: string }[];
    }>(await api('memory/users/user_001/memories?status=active'), 200);
    return {
      facts: body.facts.map((fact) => fact.statement).sort(),
      summary: body.summaries.find((summary) => summary.sessionId === sessionId)?.summary ?? '',
    };
  }

  it('withdraws what an edited-away message taught, learns the edit, and follows a switch back', async () => {
    const sessionId = await alice.startSession();
    await ask(sessionId, 'I love sailing.');
    const chess = await ask(sessionId, 'I love chess.');
    expect((await memory(sessionId)).facts).toEqual(['The user loves chess.', 'The user loves sailing.']);

    // The user takes "chess" back: the edit's branch is the one kept.
    await ask(sessionId, 'I love tennis.', { editOf: chess });
    const edited = await memory(sessionId);
    expect(edited.facts).toEqual(['The user loves sailing.', 'The user loves tennis.']);
    expect(edited.summary).toContain('I love tennis.');
    expect(edited.summary).toContain('I love sailing.');
    expect(edited.summary).not.toContain('chess');

    // Back to the old branch, and on from there: memory follows it.
    await expectStatus(
      await api(`history/conversations/${sessionId}/branch`, {
        method: 'PUT',
        body: JSON.stringify({ chatMessageId: chess }),
      }),
      200,
    );
    await ask(sessionId, 'Thanks, that is all.');
    const back = await memory(sessionId);
    expect(back.facts).toEqual(['The user loves chess.', 'The user loves sailing.']);
    expect(back.summary).toContain('I love chess.');
    expect(back.summary).not.toContain('tennis');
  });
});
