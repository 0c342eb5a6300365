// The History API in process: real HttpRequest objects, the real use-cases, and the in-memory history, chat
// and streaming fakes.
import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import type { App } from '../shared/app/app.js';
import { forkBranch } from '../shared/conversation/branch-path.js';
import { MAX_PATH_GAPS, type TurnBranch, type TurnFork } from '../shared/conversation/branches.js';
import { turnInstanceId } from '../shared/conversation/turn-ids.js';
import { headerTouch } from '../shared/chat/header-touch.js';
import {
  MAX_TITLE_CHARS,
  type ConversationSummary,
  type ConversationWithMessages,
  type HistoryMessage,
  type StoredMessage,
} from '../shared/history/contracts.js';
import { renderJsonExport, renderMarkdownExport } from '../shared/history/export-renderers.js';
import type { EndpointDefinition } from '../shared/http/endpoint.js';
import { asUser, callEndpoint, type CallOptions } from '../test/support/call-endpoint.js';
import {
  consolidationRecord,
  factSource,
  profileFact,
  summaryDocument,
  storeFacts,
} from '../test/support/memory-fixtures.js';
import { createTestApp, type TestApp } from '../test/support/in-memory-ports.js';
import { postChatEndpoint } from './chat.js';
import {
  deleteConversationEndpoint,
  exportConversationEndpoint,
  getConversationEndpoint,
  historyStatsEndpoint,
  listConversationsEndpoint,
  rateAnswerEndpoint,
  renameConversationEndpoint,
  switchBranchEndpoint,
} from './history-api.js';

let app: TestApp;
beforeEach(() => {
  app = createTestApp();
});

const at = (minute: number, second = 0) => new Date(Date.UTC(2026, 10, 22, 10, minute, second)).toISOString();

interface Seeded {
  sessionId: string;
  messages: HistoryMessage[];
}

/**
 * A conversation as a turn's commit and the history worker leave it: a session, the header (touched with every
 * message), and the first `persisted` messages stored as items and recorded (tokens 10 per message).
 */
async function seed(
  userId: string,
  turns: [question: string, answer: string][],
  options: { minute?: number; persisted?: number } = {},
): Promise<Seeded> {
  const { sessionId } = await app.fakes.sessions.create(userId);
  const minute = options.minute ?? 0;
  const messages: HistoryMessage[] = turns.flatMap(([question, answer], turn) => {
    const chatMessageId = randomUUID();
    return [
      {
        messageId: `${chatMessageId}_user`,
        chatMessageId,
        role: 'user' as const,
        content: question,
        timestamp: at(minute, turn * 2),
        ordinal: turn * 2,
      },
      {
        messageId: `${chatMessageId}_assistant`,
        chatMessageId,
        role: 'assistant' as const,
        content: answer,
        timestamp: at(minute, turn * 2 + 1),
        finishReason: 'stop',
        ordinal: turn * 2 + 1,
      },
    ];
  });
  const last = messages.at(-1)!;
  await app.fakes.headers.touch({
    userId,
    sessionId,
    createdAt: messages[0]!.timestamp,
    lastActivity: last.timestamp,
    messageCount: messages.length,
    preview: last.content,
    firstUserText: messages[0]!.content,
  });
  const persisted = options.persisted ?? messages.length;
  if (persisted > 0) {
    await app.fakes.longTermMessages.put(
      messages.slice(0, persisted).map((m) => stored(userId, sessionId, m)),
    );
    await app.fakes.headers.recordPersisted(userId, sessionId, {
      upTo: persisted,
      at: last.timestamp,
      tokens: { prompt: 6 * persisted, completion: 4 * persisted, total: 10 * persisted },
      textTokens: 0,
    });
  }
  return { sessionId, messages };
}

function stored(userId: string, sessionId: string, message: HistoryMessage): StoredMessage {
  return { ...message, id: message.messageId, kind: 'message', userId, sessionId };
}

async function expectProblem(
  reply: Awaited<ReturnType<typeof callEndpoint>>,
  status: number,
  code: string,
): Promise<{ detail: string; instance?: string; errors?: { path: string; message: string }[] }> {
  const problem = await reply.json<{
    status: number;
    code: string;
    detail: string;
    errors?: { path: string; message: string }[];
  }>();
  expect(reply.status, JSON.stringify(problem)).toBe(status);
  expect(reply.headers.get('content-type')).toBe('application/problem+json');
  expect(problem).toMatchObject({ status, code });
  return problem;
}

function call<P, Q, B>(
  definition: EndpointDefinition<App, P, Q, B>,
  path: string,
  params: Record<string, string>,
  user = 'user_001',
  options: CallOptions = {},
) {
  return callEndpoint(definition, app, { path, params, headers: asUser(user), ...options });
}

const list = (query = '', user = 'user_001', pathUser = user) =>
  call(
    listConversationsEndpoint,
    `/api/history/users/${pathUser}/conversations${query}`,
    { userId: pathUser },
    user,
  );
const get = (sessionId: string, query = '', user = 'user_001') =>
  call(getConversationEndpoint, `/api/history/conversations/${sessionId}${query}`, { sessionId }, user);
const rename = (sessionId: string, json: unknown, user = 'user_001') =>
  call(renameConversationEndpoint, `/api/history/conversations/${sessionId}/title`, { sessionId }, user, {
    method: 'PUT',
    json,
  });
const remove = (sessionId: string, user = 'user_001') =>
  call(deleteConversationEndpoint, `/api/history/conversations/${sessionId}`, { sessionId }, user, {
    method: 'DELETE',
  });
const exportAs = (sessionId: string, query: string, user = 'user_001') =>
  call(
    exportConversationEndpoint,
    `/api/history/conversations/${sessionId}/export${query}`,
    { sessionId },
    user,
  );
const stats = (user = 'user_001', pathUser = user) =>
  call(historyStatsEndpoint, `/api/history/users/${pathUser}/stats`, { userId: pathUser }, user);

function summary(seeded: Seeded, title: string, titleSource = 'first-message'): ConversationSummary {
  const last = seeded.messages.at(-1)!;
  return {
    sessionId: seeded.sessionId,
    title,
    titleSource: titleSource as ConversationSummary['titleSource'],
    createdAt: seeded.messages[0]!.timestamp,
    lastActivity: last.timestamp,
    messageCount: seeded.messages.length,
    visibleMessageCount: seeded.messages.length,
    preview: last.content,
  };
}

/** The summary as the list and the conversation show it: with its cost (no model call was recorded for these). */
function shown(seeded: Seeded, title: string): ConversationSummary {
  return { ...summary(seeded, title), cost: { usd: 0 } };
}

describe('GET /api/history/users/{userId}/conversations', () => {
  it("lists the caller's conversations newest activity first, a page at a time", async () => {
    const old = await seed('user_001', [['What is Rust?', 'A language.']], { minute: 1 });
    const mid = await seed('user_001', [['Plan a trip to Oslo', 'Day 1: ...']], { minute: 2 });
    const recent = await seed('user_001', [['Add 2 and 3', '5']], { minute: 3 });
    await seed('user_002', [['Not yours', 'No.']], { minute: 4 });

    const first = await list('?limit=2');
    expect(first.status).toBe(200);
    expect(first.headers.get('cache-control')).toBe('no-store');
    const page = await first.json<{ conversations: ConversationSummary[]; continuationToken?: string }>();
    expect(page).toEqual({
      conversations: [shown(recent, 'Add 2 and 3'), shown(mid, 'Plan a trip to Oslo')],
      continuationToken: expect.any(String) as unknown,
    });
    const second = await list(`?limit=2&continuationToken=${page.continuationToken!}`);
    expect(await second.json()).toEqual({ conversations: [shown(old, 'What is Rust?')] });
    // The default page holds them all.
    expect((await (await list()).json<{ conversations: unknown[] }>()).conversations).toHaveLength(3);
  });

  it('matches words of titles or of message text with q', async () => {
    const byTitle = await seed('user_001', [['Rust lifetimes', 'They scope borrows.']], { minute: 1 });
    const byText = await seed('user_001', [['Question', 'Rust is a language with lifetimes.']], {
      minute: 2,
    });
    await seed('user_001', [['Unrelated', 'Nothing here.']], { minute: 3 });
    await seed('user_002', [['Rust lifetimes', 'also']], { minute: 4 });

    const found = await (
      await list('?q=%20rust%20LIFETIMES%20')
    ).json<{ conversations: ConversationSummary[] }>();
    expect(found.conversations.map((c) => c.sessionId)).toEqual([byText.sessionId, byTitle.sessionId]);
    expect(await (await list('?q=python')).json()).toEqual({ conversations: [] });
  });

  it("refuses another user's list (403) and bad limits, tokens and queries (400)", async () => {
    await expectProblem(await list('', 'user_001', 'user_002'), 403, 'forbidden');
    for (const query of ['?limit=0', '?limit=101', '?limit=abc', '?limit=1.5', '?limit=']) {
      const problem = await expectProblem(await list(query), 400, 'validation_failed');
      expect(problem.detail).toBe('Invalid query: limit must be a whole number from 1 to 100.');
    }
    const token = await expectProblem(await list('?continuationToken=nonsense'), 400, 'validation_failed');
    expect(token.detail).toMatch(/continuationToken/);
    expect((await expectProblem(await list('?q=%20%20'), 400, 'validation_failed')).detail).toBe(
      'Invalid query: q must not be empty.',
    );
    expect((await expectProblem(await list('?q=%21%3F'), 400, 'validation_failed')).detail).toBe(
      'Invalid query: q must contain a letter or a digit.',
    );
    expect((await expectProblem(await list(`?q=${'x'.repeat(201)}`), 400, 'validation_failed')).detail).toBe(
      'Invalid query: q must be at most 200 characters.',
    );
  });
});

describe('GET /api/history/conversations/{sessionId}', () => {
  it('answers the conversation with its messages, tool calls included, in pages either way', async () => {
    const seeded = await seed('user_001', [
      ['one', 'uno'],
      ['two', 'dos'],
    ]);
    const withTool: StoredMessage = {
      ...stored('user_001', seeded.sessionId, seeded.messages[1]!),
      toolCalls: [
        {
          id: 'call_1',
          name: 'add_numbers',
          arguments: '{"a":2,"b":3}',
          result: '5',
          isError: false,
          round: 0,
        },
      ],
    };
    app.fakes.longTermMessages.items.get(`user_001\u0000${seeded.sessionId}`)!.set(withTool.id, withTool);
    const expected = [...seeded.messages];
    expected[1] = { ...expected[1]!, toolCalls: withTool.toolCalls };

    const whole = await get(seeded.sessionId);
    expect(whole.status).toBe(200);
    expect(await whole.json()).toEqual({ ...shown(seeded, 'one'), messages: expected });

    const first = await (
      await get(seeded.sessionId, '?limit=3')
    ).json<{ messages: HistoryMessage[]; continuationToken: string }>();
    expect(first.messages).toEqual(expected.slice(0, 3));
    const rest = await (
      await get(seeded.sessionId, `?limit=3&continuationToken=${first.continuationToken}`)
    ).json();
    expect(rest).toEqual({ ...shown(seeded, 'one'), messages: expected.slice(3) });

    const newest = await (
      await get(seeded.sessionId, '?order=desc&limit=3')
    ).json<{ messages: HistoryMessage[]; continuationToken: string }>();
    expect(newest.messages.map((m) => m.ordinal)).toEqual([3, 2, 1]);
    const oldest = await (
      await get(seeded.sessionId, `?order=desc&limit=3&continuationToken=${newest.continuationToken}`)
    ).json<{ messages: HistoryMessage[]; continuationToken?: string }>();
    expect(oldest.messages).toEqual([expected[0]]);
    expect(oldest.continuationToken).toBeUndefined();
  });

  it("returns an answer's reasoning and a turn's use_memory false mark, stored or still in working memory", async () => {
    const seeded = await seed('user_001', [['one', 'uno']], { persisted: 0 });
    const reasoning = { text: 'Translate it.', durationMs: 3_000 };
    const marked: HistoryMessage[] = [
      { ...seeded.messages[0]!, useMemory: false },
      { ...seeded.messages[1]!, useMemory: false, reasoning },
    ];
    app.fakes.workingMemory.messages = structuredClone(marked);
    const before = await (await get(seeded.sessionId)).json<{ messages: HistoryMessage[] }>();
    expect(before.messages).toEqual(marked);

    await app.fakes.longTermMessages.put(marked.map((m) => stored('user_001', seeded.sessionId, m)));
    app.fakes.workingMemory.messages = [];
    const after = await (await get(seeded.sessionId)).json<{ messages: HistoryMessage[] }>();
    expect(after.messages).toEqual(marked);
  });

  it('shows messages the history worker has not stored yet, each once (read-your-writes)', async () => {
    const seeded = await seed(
      'user_001',
      [
        ['one', 'uno'],
        ['two', 'dos'],
      ],
      { persisted: 2 },
    );
    // Working memory holds the whole conversation; the items hold ordinals 0-1.
    app.fakes.workingMemory.messages = structuredClone(seeded.messages);
    const reply = await (await get(seeded.sessionId)).json<{ messages: HistoryMessage[] }>();
    expect(reply.messages).toEqual(seeded.messages);

    // The worker stored the next turn's items but has not recorded it yet: still each message once.
    await app.fakes.longTermMessages.put([stored('user_001', seeded.sessionId, seeded.messages[2]!)]);
    const again = await (
      await get(seeded.sessionId, '?limit=3')
    ).json<{ messages: HistoryMessage[]; continuationToken: string }>();
    expect(again.messages).toEqual(seeded.messages.slice(0, 3));
    const tail = await (
      await get(seeded.sessionId, `?continuationToken=${again.continuationToken}`)
    ).json<{ messages: HistoryMessage[] }>();
    expect(tail.messages).toEqual(seeded.messages.slice(3));
  });

  it('puts the system prompt first, from working memory until the worker stored it, then from history', async () => {
    const prompt = {
      content: 'You are helpful.\n\n## Their interests\n- Sailing.',
      personalised: true,
      createdAt: at(0),
    };
    // The worker has stored nothing yet: working memory has the prompt.
    const fresh = await seed('user_001', [['one', 'uno']], { persisted: 0 });
    app.fakes.workingMemory.messages = structuredClone(fresh.messages);
    app.fakes.workingMemory.systemPrompt = prompt;
    const early = await (await get(fresh.sessionId)).json<Record<string, unknown>>();
    expect(early).toEqual({ ...shown(fresh, 'one'), systemPrompt: prompt, messages: fresh.messages });
    expect(Object.keys(early).indexOf('systemPrompt')).toBeLessThan(Object.keys(early).indexOf('messages'));

    // Stored: long-term history has it (working memory is not read for a conversation wholly stored).
    const stored = await seed('user_001', [['two', 'dos']]);
    await app.fakes.longTermMessages.putSystemPrompt('user_001', stored.sessionId, prompt);
    app.fakes.workingMemory.systemPrompt = undefined;
    const later = await (await get(stored.sessionId)).json<{ systemPrompt?: unknown; messages: unknown[] }>();
    expect(later.systemPrompt).toEqual(prompt);
    expect(later.messages).toEqual(stored.messages);
    // It heads the first page only, in either order; a next page does not repeat it.
    const desc = await (await get(stored.sessionId, '?order=desc&limit=1')).json<Record<string, unknown>>();
    expect(desc['systemPrompt']).toEqual(prompt);
    const next = await (
      await get(
        stored.sessionId,
        `?order=desc&limit=1&continuationToken=${String(desc['continuationToken'])}`,
      )
    ).json<Record<string, unknown>>();
    expect(next).not.toHaveProperty('systemPrompt');

    // Exports carry it before the messages.
    const markdown = await (await exportAs(stored.sessionId, '?format=markdown')).text();
    expect(markdown.indexOf('## System prompt')).toBeGreaterThan(0);
    expect(markdown.indexOf('## System prompt')).toBeLessThan(markdown.indexOf('## User'));
    const json = JSON.parse(await (await exportAs(stored.sessionId, '?format=json')).text()) as Record<
      string,
      unknown
    >;
    expect(json['systemPrompt']).toEqual(prompt);

    // A conversation without one (begun before prompts were kept) answers without the field.
    const old = await seed('user_001', [['three', 'tres']]);
    expect(await (await get(old.sessionId)).json()).not.toHaveProperty('systemPrompt');
  });

  it("answers another user's conversation exactly as an unknown one (404)", async () => {
    const seeded = await seed('user_001', [['mine', 'yes']]);
    const unknown = randomUUID();
    const theirs = await expectProblem(await get(seeded.sessionId, '', 'user_002'), 404, 'not_found');
    const missing = await expectProblem(await get(unknown), 404, 'not_found');
    const neutral = (problem: object, id: string) =>
      JSON.parse(JSON.stringify(problem).replaceAll(id, 'ID')) as unknown;
    expect(neutral(theirs, seeded.sessionId)).toEqual(neutral(missing, unknown));
    expect(missing.detail).toBe(`No conversation '${unknown}' for this user.`);
  });

  it('refuses bad limits, tokens and orders (400)', async () => {
    const { sessionId } = await seed('user_001', [['q', 'a']]);
    expect((await expectProblem(await get(sessionId, '?limit=501'), 400, 'validation_failed')).detail).toBe(
      'Invalid query: limit must be a whole number from 1 to 500.',
    );
    const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    for (const token of ['garbage!', b64({ v: 1, o: -2, d: 'asc' }), b64({ v: 9, o: 1, d: 'asc' })]) {
      const problem = await expectProblem(
        await get(sessionId, `?continuationToken=${token}`),
        400,
        'validation_failed',
      );
      expect(problem.errors?.map((e) => e.path)).toEqual(['continuationToken']);
    }
    const otherOrder = await expectProblem(
      await get(sessionId, `?order=desc&continuationToken=${b64({ v: 1, o: 3, d: 'asc' })}`),
      400,
      'validation_failed',
    );
    expect(otherOrder.detail).toMatch(/continues a page in order 'asc'/);
    expect(
      (await expectProblem(await get(sessionId, '?order=sideways'), 400, 'validation_failed')).detail,
    ).toBe("Invalid query: order must be 'asc' or 'desc'.");
    expect((await expectProblem(await get('not-a-uuid'), 400, 'validation_failed')).errors?.[0]?.path).toBe(
      'sessionId',
    );
  });
});

describe('PUT /api/history/conversations/{sessionId}/title', () => {
  it('sets the title, which a later model title does not replace', async () => {
    const seeded = await seed('user_001', [['first question', 'answer']]);
    const reply = await rename(seeded.sessionId, { title: '  My trip  ' });
    expect(reply.status).toBe(200);
    expect(await reply.json()).toEqual(summary(seeded, 'My trip', 'user'));
    expect(await app.fakes.headers.setTitle('user_001', seeded.sessionId, 'Model title', 'model')).toBe(
      'kept',
    );
    const listed = await (await list()).json<{ conversations: ConversationSummary[] }>();
    expect(listed.conversations[0]).toMatchObject({ title: 'My trip', titleSource: 'user' });
  });

  it("refuses bad titles (400) and another user's or an unknown conversation (404)", async () => {
    const { sessionId } = await seed('user_001', [['q', 'a']]);
    const cases: [unknown, string][] = [
      [{ title: '   ' }, 'Invalid title: title must not be empty.'],
      [
        { title: 'x'.repeat(MAX_TITLE_CHARS + 1) },
        `Invalid title: title must be at most ${MAX_TITLE_CHARS} characters.`,
      ],
      [{ title: 'line\u0000break' }, 'Invalid title: title must not contain control characters.'],
      [{ title: 'line\u0085next' }, 'Invalid title: title must not contain control characters.'],
      [
        { title: 'invoice\u202Efdp.exe' },
        'Invalid title: title must not contain bidirectional control characters (U+202A to U+202E, U+2066 to U+2069).',
      ],
      [
        { title: 'isolate \u2067x\u2069' },
        'Invalid title: title must not contain bidirectional control characters (U+202A to U+202E, U+2066 to U+2069).',
      ],
      [
        { title: 'half \ud83d pair' },
        'Invalid title: title must not contain unpaired surrogates (text that is not valid Unicode).',
      ],
      [{ title: 42 }, 'Invalid title: title must be a string.'],
      [{}, 'Invalid title: title must be a string.'],
    ];
    for (const [json, detail] of cases)
      expect((await expectProblem(await rename(sessionId, json), 400, 'validation_failed')).detail).toBe(
        detail,
      );
    await expectProblem(await rename(sessionId, { title: 'Mine now' }, 'user_002'), 404, 'not_found');
    await expectProblem(await rename(randomUUID(), { title: 'Nobody' }), 404, 'not_found');
    expect((await app.fakes.headers.get('user_001', sessionId))?.title).toBe('q');
  });
});

describe('PUT /api/history/conversations/{sessionId}/turns/{chatMessageId}/feedback', () => {
  const rate = (sessionId: string, chatMessageId: string, json: unknown, user = 'user_001') =>
    call(
      rateAnswerEndpoint,
      `/api/history/conversations/${sessionId}/turns/${chatMessageId}/feedback`,
      { sessionId, chatMessageId },
      user,
      { method: 'PUT', json },
    );
  const answerOf = async (sessionId: string) =>
    (await (await get(sessionId)).json<ConversationWithMessages>()).messages.find(
      (message) => message.role === 'assistant',
    );

  it('keeps the rating with the answer in history, changes it, and takes it back', async () => {
    const seeded = await seed('user_001', [['q', 'a']]);
    const turn = seeded.messages[0]!.chatMessageId;
    const up = await rate(seeded.sessionId, turn, { rating: 'up' });
    expect(up.status).toBe(200);
    const reply = await up.json<{ chatMessageId: string; feedback: { rating: string; at: string } }>();
    expect(reply).toMatchObject({ chatMessageId: turn, feedback: { rating: 'up' } });
    expect(Number.isNaN(Date.parse(reply.feedback.at))).toBe(false);
    expect((await answerOf(seeded.sessionId))?.feedback).toEqual(reply.feedback);

    await rate(seeded.sessionId, turn, { rating: 'down' });
    expect((await answerOf(seeded.sessionId))?.feedback?.rating).toBe('down');
    expect(await (await rate(seeded.sessionId, turn, { rating: null })).json()).toEqual({
      chatMessageId: turn,
      feedback: null,
    });
    expect((await answerOf(seeded.sessionId))?.feedback).toBeUndefined();
  });

  it("refuses bad input (400), another user's or an unknown turn (404), and an answer not stored yet (409)", async () => {
    const seeded = await seed('user_001', [['q', 'a']]);
    const turn = seeded.messages[0]!.chatMessageId;
    for (const json of [{ rating: 'meh' }, {}, { rating: 1 }, 'up'])
      await expectProblem(await rate(seeded.sessionId, turn, json), 400, 'validation_failed');
    await expectProblem(await rate(seeded.sessionId, '../x', { rating: 'up' }), 400, 'validation_failed');
    await expectProblem(await rate(seeded.sessionId, turn, { rating: 'up' }, 'user_002'), 404, 'not_found');
    await expectProblem(await rate(seeded.sessionId, randomUUID(), { rating: 'up' }), 404, 'not_found');
    await expectProblem(await rate(randomUUID(), turn, { rating: 'up' }), 404, 'not_found');
    expect((await answerOf(seeded.sessionId))?.feedback).toBeUndefined();

    // A turn whose answer is committed in working memory but not stored by the history worker yet.
    const pending = await seed('user_001', [['q', 'a']], { persisted: 1 });
    app.fakes.workingMemory.messages = structuredClone(pending.messages);
    const notReady = await rate(pending.sessionId, pending.messages[0]!.chatMessageId, { rating: 'up' });
    await expectProblem(notReady, 409, 'not_ready');
    expect(notReady.headers.get('retry-after')).toBe('1');
    // Its question stored and no answer anywhere: a turn that failed has nothing to rate.
    app.fakes.workingMemory.messages = [];
    await expectProblem(
      await rate(pending.sessionId, pending.messages[0]!.chatMessageId, { rating: 'up' }),
      400,
      'validation_failed',
    );
  });
});

describe('GET /api/history/conversations/{sessionId}/export', () => {
  it('exports the whole conversation as a Markdown or JSON attachment', async () => {
    const seeded = await seed('user_001', [['Trip: Oslo/Bergen?', 'Take the train.']], { persisted: 1 });
    app.fakes.workingMemory.messages = structuredClone(seeded.messages);
    const conversation = { ...summary(seeded, 'Trip: Oslo/Bergen?'), messages: seeded.messages };

    const markdown = await exportAs(seeded.sessionId, '?format=markdown');
    expect(markdown.status).toBe(200);
    expect(markdown.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
    expect(markdown.headers.get('content-disposition')).toBe('attachment; filename="Trip-Oslo-Bergen.md"');
    expect(await markdown.text()).toBe(renderMarkdownExport(conversation));

    const json = await exportAs(seeded.sessionId, '?format=json');
    expect(json.headers.get('content-type')).toBe('application/json');
    expect(json.headers.get('content-disposition')).toBe('attachment; filename="Trip-Oslo-Bergen.json"');
    expect(await json.text()).toBe(renderJsonExport(conversation));
    // Markdown is the default.
    expect((await exportAs(seeded.sessionId, '')).headers.get('content-type')).toBe(
      'text/markdown; charset=utf-8',
    );
  });

  it('walks every page of a long conversation', async () => {
    const turns = Array.from({ length: 260 }, (_, i): [string, string] => [`q${i}`, `a${i}`]);
    const seeded = await seed('user_001', turns);
    const exported = JSON.parse(await (await exportAs(seeded.sessionId, '?format=json')).text()) as {
      messages: HistoryMessage[];
    };
    expect(exported.messages.map((m) => m.ordinal)).toEqual(seeded.messages.map((m) => m.ordinal));
  });

  it("refuses a bad format (400) and another user's conversation (404)", async () => {
    const { sessionId } = await seed('user_001', [['q', 'a']]);
    expect(
      (await expectProblem(await exportAs(sessionId, '?format=pdf'), 400, 'validation_failed')).detail,
    ).toBe("Invalid query: format must be 'markdown' or 'json'.");
    await expectProblem(await exportAs(sessionId, '?format=json', 'user_002'), 404, 'not_found');
  });
});

describe('GET /api/history/users/{userId}/stats', () => {
  it("totals the caller's conversations, messages and tokens, and refuses another user's (403)", async () => {
    await seed('user_001', [['a', 'b']]);
    await seed(
      'user_001',
      [
        ['c', 'd'],
        ['e', 'f'],
      ],
      { persisted: 2 },
    );
    await seed('user_002', [['g', 'h']]);
    const job = (id: string, userId: string, kind: 'turn' | 'title', costUsd: number) => ({
      id,
      userId,
      type: 'usage' as const,
      day: at(0).slice(0, 10),
      at: at(0),
      jobs: {
        [id]: [
          {
            kind,
            model: 'gpt-5.4-mini',
            calls: 1,
            inputTokens: 100,
            cachedInputTokens: 0,
            outputTokens: 10,
            reasoningTokens: 0,
            costUsd,
            priced: true,
          },
        ],
      },
      ttl: 1,
    });
    await app.fakes.usage.record(job('usage-1', 'user_001', 'turn', 0.25));
    await app.fakes.usage.record(job('usage-2', 'user_001', 'title', 0.05));
    await app.fakes.usage.record(job('usage-3', 'user_002', 'turn', 1));
    const reply = await stats();
    expect(reply.status).toBe(200);
    expect(await reply.json()).toEqual({
      userId: 'user_001',
      conversations: 2,
      messages: 6,
      tokens: { prompt: 24, completion: 16, total: 40 },
      cost: { usd: 0.3, turnsUsd: 0.25, backgroundUsd: 0.05 },
    });
    await expectProblem(await stats('user_001', 'user_002'), 403, 'forbidden');
  });
});

describe('DELETE /api/history/conversations/{sessionId}', () => {
  it('removes the conversation from every store, stops and purges its turns, and a later POST /api/chat → 404', async () => {
    const seeded = await seed('user_001', [['q', 'a']], { persisted: 2 });
    const sibling = await seed('user_001', [['keep', 'me']]);
    const { sessionId } = seeded;
    const chatMessageId = randomUUID();
    const posted = await callEndpoint(postChatEndpoint, app, {
      headers: asUser('user_001'),
      json: { sessionId, chatMessageId, text: 'one more' },
    });
    expect(posted.status).toBe(202);
    // The turn is still running, with its record, an event and its working memory.
    const instanceId = turnInstanceId(sessionId, chatMessageId);
    await app.fakes.orchestrations.startNew('chatTurn', { instanceId });
    const other = turnInstanceId(sibling.sessionId, randomUUID());
    await app.fakes.orchestrations.startNew('chatTurn', { instanceId: other });
    app.fakes.turns.turns.set(chatMessageId, {
      userId: 'user_001',
      sessionId,
      chatMessageId,
      userText: 'one more',
      postedAt: at(5),
      history: null,
      rounds: [],
    });
    app.fakes.turns.results.set(`${chatMessageId}/0/0`, {
      round: 0,
      index: 0,
      toolCallId: 'call_1',
      name: 'add_numbers',
      arguments: '{}',
      result: '5',
      isError: false,
    });
    await app.fakes.events.append([
      {
        type: 'message-start',
        userMessageId: 'u',
        assistantMessageId: 'a',
        sessionId,
        chatMessageId,
        seq: 1,
      },
    ]);
    app.fakes.workingMemory.messages = structuredClone(seeded.messages);
    await app.fakes.sessionMemory.putExchange('user_001', sessionId, {
      exchangeId: seeded.messages[0]!.chatMessageId,
      ordinal: 0,
      line: 'q → a',
      tags: ['q'],
      at: at(0),
    });
    expect(app.fakes.tickets.grants.size).toBe(1);
    // What long-term memory kept of it: its summary, a fact only it taught, one also said in the sibling.
    await app.fakes.summaries.put(summaryDocument('user_001', sessionId), undefined);
    await app.fakes.summaries.put(summaryDocument('user_001', sibling.sessionId), undefined);
    await storeFacts(app.fakes.facts, profileFact('user_001', 'only-here', [factSource(sessionId, 1)]));
    await storeFacts(
      app.fakes.facts,
      profileFact('user_001', 'both', [factSource(sessionId, 1), factSource(sibling.sessionId, 2)]),
    );
    await app.fakes.facts.createConsolidation(consolidationRecord('user_001', sessionId, chatMessageId));

    const reply = await remove(sessionId);
    expect(reply.status).toBe(204);
    expect(await reply.text()).toBe('');

    expect(await app.fakes.headers.get('user_001', sessionId)).toBeUndefined();
    expect(app.fakes.longTermMessages.items.has(`user_001\u0000${sessionId}`)).toBe(false);
    expect(app.fakes.sessionMemory.exchanges.size).toBe(0);
    // The session stays only as the conversation's tombstone.
    const live = app.fakes.sessions.sessions.filter(
      (s) => !app.fakes.sessions.deleting.has(`user_001/${s.sessionId}`),
    );
    expect(live.map((s) => s.sessionId)).toEqual([sibling.sessionId]);
    expect(app.fakes.sessions.deleted).toEqual(new Set([`user_001/${sessionId}`]));
    expect([...app.fakes.posted.records.values()]).toEqual([]);
    expect(app.fakes.tickets.grants.size).toBe(0);
    expect(app.fakes.turns.turns.size).toBe(0);
    expect(app.fakes.turns.results.size).toBe(0);
    expect(app.fakes.events.stored.size).toBe(0);
    expect(app.fakes.workingMemory.messages).toEqual([]);
    expect(await app.fakes.orchestrations.getStatus(instanceId)).toBeUndefined();
    expect(await app.fakes.summaries.get('user_001', sessionId)).toBeUndefined();
    expect(await app.fakes.facts.list('user_001')).toEqual([
      expect.objectContaining({ id: 'both', provenance: [factSource(sibling.sessionId, 2)] }),
    ]);
    expect(app.fakes.facts.records.size).toBe(0);
    // The other conversation is untouched.
    expect((await app.fakes.orchestrations.getStatus(other))?.runtimeStatus).toBe('Running');
    expect(await app.fakes.headers.get('user_001', sibling.sessionId)).toBeDefined();
    expect(await app.fakes.summaries.get('user_001', sibling.sessionId)).toBeDefined();

    const again = await callEndpoint(postChatEndpoint, app, {
      headers: asUser('user_001'),
      json: { sessionId, chatMessageId: randomUUID(), text: 'still there?' },
    });
    await expectProblem(again, 404, 'not_found');
    await expectProblem(await remove(sessionId), 404, 'not_found');
    await expectProblem(await get(sessionId), 404, 'not_found');
  });

  it('refuses once marked: POST /api/chat → 404 while the delete runs, and a retried delete resumes', async () => {
    const { sessionId } = await seed('user_001', [['q', 'a']]);
    // A delete that stopped after marking the session and removing the header (say, the store failed).
    await app.fakes.sessions.markDeleting('user_001', sessionId);
    await app.fakes.headers.delete('user_001', sessionId);
    const posted = await callEndpoint(postChatEndpoint, app, {
      headers: asUser('user_001'),
      json: { sessionId, chatMessageId: randomUUID(), text: 'hello?' },
    });
    await expectProblem(posted, 404, 'not_found');

    expect((await remove(sessionId)).status).toBe(204);
    expect(app.fakes.sessions.deleted).toEqual(new Set([`user_001/${sessionId}`]));
    expect(app.fakes.longTermMessages.items.size).toBe(0);
  });

  it("answers another user's and an unknown conversation 404, and deletes nothing", async () => {
    const { sessionId } = await seed('user_001', [['q', 'a']]);
    const theirs = await expectProblem(await remove(sessionId, 'user_002'), 404, 'not_found');
    const unknown = randomUUID();
    const missing = await expectProblem(await remove(unknown), 404, 'not_found');
    expect(theirs.detail.replace(sessionId, 'ID')).toBe(missing.detail.replace(unknown, 'ID'));
    expect(await app.fakes.headers.get('user_001', sessionId)).toBeDefined();
    expect(await app.fakes.sessions.find('user_001', sessionId)).toBeDefined();
  });
});

describe('branches in the conversation API', () => {
  const USER = 'user_001';
  let sessionId: string;
  beforeEach(async () => {
    sessionId = (await app.fakes.sessions.create(USER)).sessionId;
  });

  /** Commits a turn as the chat turn does: a fork first moves to the replaced turn's parent's path. */
  async function commit(id: string, question: string, fork?: TurnFork) {
    const memory = app.fakes.workingMemory;
    let loaded = await memory.load(USER, sessionId);
    let branch: TurnBranch | undefined;
    if (fork !== undefined) {
      const replaced = (await memory.findTurn(USER, sessionId, fork.replaces))!;
      const parentId = replaced.branch.parentChatMessageId;
      const parent = parentId === null ? undefined : await memory.findTurn(USER, sessionId, parentId);
      if (parent !== undefined) loaded = await memory.showPath(USER, sessionId, parent);
      branch = forkBranch({
        fork,
        newChatMessageId: id,
        replaced: replaced.branch,
        parent,
        firstOrdinal: loaded.messageCount,
      });
    }
    const stored = await memory.append(
      USER,
      sessionId,
      [
        { messageId: `${id}_user`, chatMessageId: id, role: 'user', content: question, timestamp: at(0) },
        {
          messageId: `${id}_assistant`,
          chatMessageId: id,
          role: 'assistant',
          content: `re: ${question}`,
          timestamp: at(1),
        },
      ],
      loaded,
      branch ? { branch } : undefined,
    );
    await app.fakes.headers.touch(headerTouch({ userId: USER, sessionId, chatMessageId: id }, stored)!);
  }

  /** The history worker catches up: every committed message stored and recorded. */
  async function persistAll() {
    const all = app.fakes.workingMemory.messages as HistoryMessage[];
    await app.fakes.longTermMessages.put(all.map((m) => stored(USER, sessionId, m)));
    await app.fakes.headers.recordPersisted(USER, sessionId, {
      upTo: all.length,
      at: at(2),
      tokens: { prompt: 0, completion: 0, total: 0 },
      textTokens: 0,
    });
  }

  const shown = async (query = '') => (await get(sessionId, query)).json<ConversationWithMessages>();
  const questions = (conversation: ConversationWithMessages) =>
    conversation.messages.filter((m) => m.role === 'user').map((m) => m.content);
  const switchTo = (chatMessageId: unknown, user = USER, query = '') =>
    call(
      switchBranchEndpoint,
      `/api/history/conversations/${sessionId}/branch${query}`,
      { sessionId },
      user,
      {
        method: 'PUT',
        json: { chatMessageId },
      },
    );

  const [a, b, c, d, e, f] = [
    randomUUID(),
    randomUUID(),
    randomUUID(),
    randomUUID(),
    randomUUID(),
    randomUUID(),
  ];

  it('shows the active path, each turn at a branch point with its alternatives, before and after history stored them', async () => {
    await commit(a, 'A');
    await commit(b, 'B');
    await commit(c, 'C');
    await commit(d, 'C', { replaces: c, origin: 'regenerate' });
    await commit(e, 'B edited', { replaces: b, origin: 'edit' });
    const pending = await shown();
    expect(questions(pending)).toEqual(['A', 'B edited']);
    expect(pending.path).toEqual({ leafChatMessageId: e, branchId: e });
    // Ten messages on three branches; the path shown holds four of them, as the list says too.
    expect(pending).toMatchObject({ messageCount: 10, visibleMessageCount: 4 });
    const listed = await (await list()).json<{ conversations: ConversationSummary[] }>();
    expect(listed.conversations[0]).toMatchObject({ sessionId, messageCount: 10, visibleMessageCount: 4 });
    const group = { index: 1, count: 2, chatMessageIds: [b, e] };
    expect(pending.messages.map((m) => m.alternatives)).toEqual([undefined, undefined, group, group]);
    await persistAll();
    expect(await shown()).toEqual(pending);

    // A third alternative joins the same group, in the order they were made.
    await commit(f, 'B edited', { replaces: e, origin: 'regenerate' });
    const third = await shown();
    expect(third.visibleMessageCount).toBe(4);
    expect(third.messages[2]?.alternatives).toEqual({ index: 2, count: 3, chatMessageIds: [b, e, f] });
    expect(third.messages[2]?.branch).toMatchObject({
      parentChatMessageId: a,
      alternativeOf: b,
      origin: 'regenerate',
    });
  });

  it('switches to a branch as it was last continued, pages along it either way, and exports it', async () => {
    for (const [id, text] of [
      [a, 'A'],
      [b, 'B'],
      [c, 'C'],
    ] as const)
      await commit(id, text);
    await commit(d, 'C', { replaces: c, origin: 'regenerate' });
    await commit(e, 'B edited', { replaces: b, origin: 'edit' });
    await persistAll();

    // b's branch is the main line, last continued by c.
    const main = await (await switchTo(b)).json<ConversationWithMessages>();
    expect(questions(main)).toEqual(['A', 'B', 'C']);
    expect(main.path).toEqual({ leafChatMessageId: c, branchId: 'main' });
    // A switch changes what is shown, so what is counted: all six messages of the main line.
    expect(main).toMatchObject({ messageCount: 10, visibleMessageCount: 6 });
    expect(main.messages[4]?.alternatives).toEqual({ index: 0, count: 2, chatMessageIds: [c, d] });
    expect(await shown()).toEqual(main);
    expect((await app.fakes.headers.get(USER, sessionId))?.preview).toBe('re: C');

    await switchTo(d);
    const newestFirst: HistoryMessage[] = [];
    let token: string | undefined;
    do {
      const page = await shown(`?order=desc&limit=2${token ? `&continuationToken=${token}` : ''}`);
      newestFirst.push(...page.messages);
      token = page.continuationToken;
    } while (token !== undefined);
    expect(newestFirst.map((m) => m.content)).toEqual(['re: C', 'C', 're: B', 'B', 're: A', 'A']);
    expect(newestFirst.map((m) => m.ordinal)).toEqual([7, 6, 3, 2, 1, 0]);
    const exported = await (await exportAs(sessionId, '?format=json')).json<ConversationWithMessages>();
    expect(exported.messages.map((m) => m.chatMessageId)).toEqual([a, a, b, b, d, d]);

    // Switching to the branch shown changes nothing.
    expect(await (await switchTo(d)).json<ConversationWithMessages>()).toEqual(await shown());
  });

  it('refuses to show a branch that could not be continued: one more gap than a path may have (409)', async () => {
    await commit(a, 'A');
    const gaps = Array.from({ length: MAX_PATH_GAPS }, (_, i) => ({ from: 2 + 3 * i, to: 4 + 3 * i }));
    const first = 2 + 3 * MAX_PATH_GAPS;
    const branch = { parentChatMessageId: a, branchId: b, gaps };
    app.fakes.workingMemory.messages.push(
      {
        messageId: `${b}_user`,
        chatMessageId: b,
        role: 'user',
        content: 'q',
        timestamp: at(0),
        ordinal: first,
        branch,
      },
      {
        messageId: `${b}_assistant`,
        chatMessageId: b,
        role: 'assistant',
        content: 'r',
        timestamp: at(0),
        ordinal: first + 1,
        branch,
      },
    );
    // Its newest turn is the conversation's newest: continuing it skips nothing more.
    expect((await switchTo(b)).status).toBe(200);
    await commit(c, 'C', { replaces: b, origin: 'regenerate' });
    await expectProblem(await switchTo(b), 409, 'conflict');
  });

  it('asks to retry (409) a switch to a turn posted but not answered yet', async () => {
    await commit(a, 'A');
    await app.fakes.posted.claim({
      userId: USER,
      sessionId,
      chatMessageId: b,
      textSha256: '0'.repeat(64),
      postedAt: at(2),
    });
    const reply = await switchTo(b);
    await expectProblem(reply, 409, 'not_ready');
    expect(reply.headers.get('retry-after')).toBe('2');
    // Another user's posted message is not found, as ever.
    await expectProblem(await switchTo(b, 'user_002'), 404, 'not_found');
  });

  it('asks to retry (409) a switch a commit overtook, and leaves the header on the path of that commit', async () => {
    await commit(a, 'A');
    await commit(b, 'B');
    await commit(c, 'B edited', { replaces: b, origin: 'edit' });
    const memory = app.fakes.workingMemory;
    const showPath = memory.showPath.bind(memory);
    // A turn of the shown path commits just after the switch moved working memory.
    memory.showPath = async (...args: Parameters<typeof showPath>) => {
      const moved = await showPath(...args);
      memory.showPath = showPath;
      await commit(d, 'D');
      return moved;
    };
    const reply = await switchTo(b);
    await expectProblem(reply, 409, 'not_ready');
    expect(reply.headers.get('retry-after')).not.toBeNull();
    const header = await app.fakes.headers.get(USER, sessionId);
    expect(header?.path?.leafChatMessageId).toBe(d);
    expect((await shown()).path).toEqual({ leafChatMessageId: d, branchId: 'main' });
  });

  it('refuses an unknown turn and another user alike (404), and bad bodies (400)', async () => {
    await commit(a, 'A');
    await expectProblem(await switchTo(randomUUID()), 404, 'not_found');
    await expectProblem(await switchTo(a, 'user_002'), 404, 'not_found');
    await expectProblem(await switchTo('not-a-uuid'), 400, 'validation_failed');
    await expectProblem(await switchTo(a, USER, '?limit=0'), 400, 'validation_failed');
    await expectProblem(
      await call(
        switchBranchEndpoint,
        `/api/history/conversations/nope/branch`,
        { sessionId: 'nope' },
        USER,
        {
          method: 'PUT',
          json: { chatMessageId: a },
        },
      ),
      400,
      'validation_failed',
    );
    expect((await shown()).path).toEqual({ leafChatMessageId: a, branchId: 'main' });
  });
});
