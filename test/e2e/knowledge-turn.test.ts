// A chat turn that cites the knowledge base, end to end over the local runtime: the `sources` event before
// the answer's text (live and replayed), and the sources kept by the answer, history and exports.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatCompletionRequest as OfflineRequest } from '../../local/offline-model/request-schema.js';
import { planReply } from '../../local/offline-model/reply-rules.js';
import { productVocabulary } from '../../local/offline-model-vocabulary.js';
import type { LocalRuntime } from '../../local/runtime.js';
import { MESSAGE_COMPLETED_TOPIC } from '../../shared/conversation/message-completed.js';
import type { ConversationMessage } from '../../shared/conversation/messages.js';
import { HISTORY_SUBSCRIPTION } from '../../shared/history/contracts.js';
import type { KnowledgeSearchHit } from '../../shared/knowledge/contracts.js';
import type { ChatEvent } from '../../shared/streaming/contracts.js';
import { knowledgeSearchTool, sourceOf } from '../../shared/tools/knowledge-search.js';
import {
  ChatClient,
  DEV_IDENTITY_HEADER,
  expectStatus,
  oneTo,
  seqs,
  type RealtimeListener,
} from '../support/chat-client.js';
import { settle, startTestRuntime } from '../support/local-runtime.js';
import { startScriptedModel, type ScriptedModel } from '../support/scripted-model.js';

const QUESTION = 'What does the handbook say about parental leave?';
const ANSWER =
  'Parents get twenty weeks of paid leave [Employee Handbook, p. 4], which can be split [Notes].';

const HITS: KnowledgeSearchHit[] = [
  {
    chunkId: `${'a'.repeat(32)}:3`,
    documentId: 'a'.repeat(32),
    title: 'Employee Handbook',
    headings: ['Time off', 'Parental leave'],
    heading: 'Parental leave',
    pages: [4],
    text: 'Parents get twenty weeks of paid leave. The leave can start up to four weeks before the birth.',
    library: 'shared',
    score: 0.0325,
    similarity: 0.71,
    citation: 'Employee Handbook, p. 4',
  },
  {
    chunkId: `${'b'.repeat(32)}:0`,
    documentId: 'b'.repeat(32),
    title: 'Notes',
    headings: [],
    text: 'Parental leave can be split into two blocks.',
    library: 'private',
    score: 0.016,
    similarity: 0.52,
    citation: 'Notes',
  },
];

/**
 * The runtime's chat tools as it composes them, with only the knowledge search replaced: one over HITS that records
 * each call, where a passage matches when it has a word of the query.
 */
function useFixedKnowledge(runtime: LocalRuntime): { userId: string; query: string; limit: number }[] {
  const searches: { userId: string; query: string; limit: number }[] = [];
  const { turn } = runtime.app.chat;
  turn.tools = turn.tools.replace(
    knowledgeSearchTool({
      searchKnowledge: (userId, query, limit) => {
        searches.push({ userId, query, limit });
        const words = query.toLowerCase().split(/\W+/);
        return Promise.resolve(
          HITS.filter((hit) =>
            words.some((word) => word !== '' && hit.text.toLowerCase().includes(word)),
          ).slice(0, limit),
        );
      },
    }),
  );
  return searches;
}

/** The event types with runs of content deltas collapsed into one, to read the turn's shape. */
function shape(events: readonly ChatEvent[]): string[] {
  return events
    .map((event) => event.type)
    .filter((type, index, all) => type !== 'content' || all[index - 1] !== type);
}

function answerOf(messages: readonly ConversationMessage[], chatMessageId: string) {
  return messages.find((message) => message.chatMessageId === chatMessageId && message.role === 'assistant');
}

describe('a chat turn that cites the knowledge base, with a scripted model', () => {
  let model: ScriptedModel;
  let runtime: LocalRuntime;
  let client: ChatClient;
  let live: RealtimeListener;
  let searches: { userId: string; query: string; limit: number }[];

  beforeAll(async () => {
    model = await startScriptedModel((request) => {
      // The history and memory workers' structured output: the offline model's stand-in rules answer it.
      if (request.stream !== true)
        return { content: planReply(request as unknown as OfflineRequest, productVocabulary).content };
      if (request.messages.at(-1)?.role === 'tool') return { content: ANSWER };
      return { toolCalls: [{ name: 'search_knowledge_base', arguments: '{"query":"parental leave"}' }] };
    });
    runtime = await startTestRuntime({ settings: model.settings });
    searches = useFixedKnowledge(runtime);
    client = new ChatClient(runtime.url, 'user_001');
    live = await client.listen();
  });
  afterAll(async () => {
    live?.stop();
    await runtime?.stop();
    await model?.close();
  });

  it('streams the sources after the search and before the answer, and every view of the answer keeps them', async () => {
    const sessionId = await client.startSession();
    const chatMessageId = await client.send(sessionId, QUESTION);
    const events = await live.waitForTerminal(chatMessageId);
    const replay = (await client.stream(sessionId, chatMessageId)).map((frame) => frame.data);

    expect(replay).toEqual(events);
    expect(seqs(events)).toEqual(oneTo(events.length));
    expect(shape(events)).toEqual([
      'message-start',
      'tool-call',
      'tool-result',
      'sources',
      'content',
      'message-end',
    ]);
    const sources = HITS.map(sourceOf);
    expect(events.find((event) => event.type === 'sources')).toMatchObject({ sources });
    expect(searches).toEqual([{ userId: 'user_001', query: 'parental leave', limit: 5 }]);
    // The model read each passage with the citation it gave.
    const toolMessage = model.requests.filter((request) => request.stream === true)[1]?.messages.at(-1);
    expect(toolMessage?.role).toBe('tool');
    expect(JSON.parse(toolMessage?.content ?? '{}')).toMatchObject({
      query: 'parental leave',
      results: [
        { citation: 'Employee Handbook, p. 4', pages: [4], heading: 'Parental leave', text: HITS[0]!.text },
        { citation: 'Notes', text: HITS[1]!.text },
      ],
    });

    const memory = await runtime.app.chat.turn.workingMemory.load('user_001', sessionId);
    expect(answerOf(memory.messages, chatMessageId)).toMatchObject({ content: ANSWER, sources });

    // The history worker stored the answer with its sources; the History API shows them, and both exports.
    await settle(runtime);
    expect(
      runtime.serviceBus.deadLetters({
        topicName: MESSAGE_COMPLETED_TOPIC,
        subscriptionName: HISTORY_SUBSCRIPTION,
      }),
    ).toEqual([]);
    expect(
      await runtime.app.history.messages.get('user_001', sessionId, `${chatMessageId}_assistant`),
    ).toMatchObject({ sources });
    const history = `${runtime.url}/api/history/conversations/${sessionId}`;
    const conversation = await expectStatus<{ messages: ConversationMessage[] }>(
      await fetch(history, { headers: client.headers() }),
      200,
    );
    expect(answerOf(conversation.messages, chatMessageId)).toMatchObject({ content: ANSWER, sources });
    const json = await expectStatus<{ messages: ConversationMessage[] }>(
      await fetch(`${history}/export?format=json`, { headers: client.headers() }),
      200,
    );
    expect(answerOf(json.messages, chatMessageId)?.sources).toEqual(sources);
    const markdown = await (await fetch(`${history}/export`, { headers: client.headers() })).text();
    expect(markdown).toContain(
      [
        ANSWER,
        '',
        '**Sources:**',
        '',
        `- Employee Handbook, p. 4: “${HITS[0]!.text}”`,
        `- Notes: “${HITS[1]!.text}”`,
      ].join('\n'),
    );
  });
});

describe('a chat turn that cites the knowledge base, with the offline model', () => {
  let runtime: LocalRuntime;
  let client: ChatClient;
  let live: RealtimeListener;

  beforeAll(async () => {
    runtime = await startTestRuntime();
    useFixedKnowledge(runtime);
    client = new ChatClient(runtime.url, 'user_002');
    live = await client.listen();
  });
  afterAll(async () => {
    live?.stop();
    await runtime?.stop();
  });

  it('searches when the message mentions the handbook, and answers with the passages and their citations', async () => {
    const sessionId = await client.startSession();
    const chatMessageId = await client.send(sessionId, QUESTION);
    const events = await live.waitForTerminal(chatMessageId);

    expect(seqs(events)).toEqual(oneTo(events.length));
    expect(shape(events)).toEqual([
      'message-start',
      'tool-call',
      'tool-result',
      'sources',
      'content',
      'message-end',
    ]);
    expect(events.find((event) => event.type === 'tool-call')).toMatchObject({
      name: 'search_knowledge_base',
      arguments: '{"query":"parental leave"}',
    });
    const text = events.map((event) => (event.type === 'content' ? event.delta : '')).join('');
    expect(text).toBe(
      `search_knowledge_base found: "${HITS[0]!.text}" [Employee Handbook, p. 4]; "${HITS[1]!.text}" [Notes].`,
    );
    const memory = await runtime.app.chat.turn.workingMemory.load('user_002', sessionId);
    expect(answerOf(memory.messages, chatMessageId)?.sources?.map((source) => source.citation)).toEqual([
      'Employee Handbook, p. 4',
      'Notes',
    ]);
  });
});

describe('a chat turn whose knowledge search matches nothing, with the runtime’s own search', () => {
  let runtime: LocalRuntime;
  let client: ChatClient;
  let live: RealtimeListener;

  beforeAll(async () => {
    runtime = await startTestRuntime();
    client = new ChatClient(runtime.url, 'user_002');
    live = await client.listen();
    // A handbook in the user's library, searched by the product's own knowledge search.
    const upload = await fetch(`${runtime.url}/api/knowledge/documents`, {
      method: 'POST',
      headers: { [DEV_IDENTITY_HEADER]: 'user_002', 'content-type': 'application/json' },
      body: JSON.stringify({
        fileName: 'handbook.md',
        contentType: 'text/markdown',
        contentBase64: Buffer.from(
          '# Handbook\n\n## Parental leave\n\nParental leave lasts sixteen weeks.\n\n## Expenses\n\nKeep every receipt.\n',
        ).toString('base64'),
      }),
    });
    const { document } = await expectStatus<{ document: { documentId: string } }>(upload, 202);
    const deadline = Date.now() + 30_000;
    for (;;) {
      const read = await fetch(`${runtime.url}/api/knowledge/documents/${document.documentId}`, {
        headers: { [DEV_IDENTITY_HEADER]: 'user_002' },
      });
      const { document: now } = await expectStatus<{ document: { status: string } }>(read, 200);
      if (now.status === 'ready') break;
      if (now.status === 'failed' || Date.now() > deadline) throw new Error(`the handbook is ${now.status}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  });
  afterAll(async () => {
    live?.stop();
    await runtime?.stop();
  });

  it('cites nothing: the tool finds no passage, the turn streams no sources and keeps none', async () => {
    const sessionId = await client.startSession();
    const chatMessageId = await client.send(
      sessionId,
      'What does the handbook say about quantum chromodynamics?',
    );
    const events = await live.waitForTerminal(chatMessageId);

    expect(shape(events)).toEqual(['message-start', 'tool-call', 'tool-result', 'content', 'message-end']);
    const result = events.find((event) => event.type === 'tool-result');
    expect(JSON.stringify(result)).toContain('Nothing in the user');
    const memory = await runtime.app.chat.turn.workingMemory.load('user_002', sessionId);
    expect(answerOf(memory.messages, chatMessageId)?.sources ?? []).toEqual([]);
    // The handbook is searched all the same: a question it answers is cited.
    const cited = await client.send(sessionId, 'What does the handbook say about parental leave?');
    const citedEvents = await live.waitForTerminal(cited);
    const sources = citedEvents.find((event) => event.type === 'sources');
    if (sources?.type !== 'sources') throw new Error('no sources event');
    expect(sources.sources.map((source) => source.excerpt)).toEqual(['Parental leave lasts sixteen weeks.']);
  });
});
