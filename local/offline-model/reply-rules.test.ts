// The offline model's documented rules, one by one.
import { describe, expect, it } from 'vitest';
import { SEARCH_KNOWLEDGE_BASE_TOOL } from '../../shared/knowledge/contracts.js';
import { SEARCH_CONVERSATION_HISTORY_TOOL } from '../../shared/memory/contracts.js';
import { productVocabulary } from '../offline-model-vocabulary.js';
import { planReply as planWith } from './reply-rules.js';
import type { ChatCompletionRequest } from './request-schema.js';
import { NO_VOCABULARY, type OfflineModelVocabulary } from './vocabulary.js';

/** The rules as the local runtime runs them: with the product's format and tool names. */
const planReply = (request: ChatCompletionRequest, vocabulary: OfflineModelVocabulary = productVocabulary) =>
  planWith(request, vocabulary);

const addTool = {
  type: 'function' as const,
  function: {
    name: 'add_numbers',
    description: 'Adds two numbers',
    parameters: {
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' } },
      required: ['a', 'b'],
    },
  },
};
const searchTool = {
  type: 'function' as const,
  function: {
    name: 'search_knowledge_base',
    description: 'Searches documents',
    parameters: {
      type: 'object',
      properties: { query: { type: 'string' }, top: { type: 'integer' } },
      required: ['query'],
    },
  },
};

const request = (content: string, extra: Partial<ChatCompletionRequest> = {}): ChatCompletionRequest => ({
  model: 'offline-stand-in',
  messages: [
    { role: 'system', content: 'You are helpful.' },
    { role: 'user', content },
  ],
  ...extra,
});

/** A request whose last message is the result of one call of the named tool. */
const afterSearchWith = (tool: string, result: string): ChatCompletionRequest => ({
  model: 'offline-stand-in',
  messages: [
    { role: 'user', content: 'What did we talk about last time?' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: tool, arguments: '{}' } }],
    },
    { role: 'tool', tool_call_id: 'call_1', content: result },
  ],
});

describe('planReply', () => {
  it('quotes the question in a short reply that says it is a stand-in', () => {
    expect(planReply(request('What is the capital of France?'))).toEqual({
      reasoning: '',
      content:
        'This is the offline stand-in model, not a real LLM. You said: "What is the capital of France?"',
      toolCalls: [],
    });
  });

  it('calls every named tool, in the order named, with arguments from the text', () => {
    const plan = planReply(
      request('search_knowledge_base for "refund policy" then add_numbers 2 and 3', {
        tools: [addTool, searchTool],
      }),
    );
    expect(plan.content).toBe('');
    expect(plan.toolCalls).toEqual([
      { name: 'search_knowledge_base', arguments: '{"query":"refund policy","top":2}' },
      { name: 'add_numbers', arguments: '{"a":2,"b":3}' },
    ]);
  });

  it('does not call tools that are only part of a word, nor when tool_choice is none', () => {
    expect(planReply(request('my address_numbers', { tools: [addTool] })).toolCalls).toEqual([]);
    expect(
      planReply(request('add_numbers 1 2', { tools: [addTool], tool_choice: 'none' })).toolCalls,
    ).toEqual([]);
  });

  it('honours a forced or required tool choice', () => {
    const forced = planReply(
      request('anything 4 5', {
        tools: [searchTool, addTool],
        tool_choice: { type: 'function', function: { name: 'add_numbers' } },
      }),
    );
    expect(forced.toolCalls).toEqual([{ name: 'add_numbers', arguments: '{"a":4,"b":5}' }]);
    const required = planReply(request('find it', { tools: [searchTool], tool_choice: 'required' }));
    expect(required.toolCalls.map((c) => c.name)).toEqual(['search_knowledge_base']);
  });

  it('answers tool results in text, naming each tool', () => {
    const plan = planReply({
      model: 'm',
      tools: [addTool],
      messages: [
        { role: 'user', content: 'add_numbers 2 and 3, and search_knowledge_base' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'add_numbers', arguments: '{"a":2,"b":3}' } },
            { id: 'c2', type: 'function', function: { name: 'search_knowledge_base', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: '5' },
        { role: 'tool', tool_call_id: 'c2', content: '  [] ' },
      ],
    });
    expect(plan).toEqual({
      reasoning: '',
      content: 'add_numbers returned 5. search_knowledge_base returned [].',
      toolCalls: [],
    });
  });

  it('reasons first when asked to think, and replies with exactly N words', () => {
    const plan = planReply(request('Think hard, then reply with 12 words.'));
    expect(plan.reasoning).toBe(
      'The user wrote "Think hard, then reply with 12 words.". I will reply with 12 words.',
    );
    expect(plan.content.split(/\s+/)).toHaveLength(12);
  });

  it('answers json_schema requests with JSON that fits the schema, and json_object with an object', () => {
    const schema = {
      type: 'object',
      properties: { title: { type: 'string', maxLength: 10 }, count: { type: 'integer' } },
      required: ['title', 'count'],
      additionalProperties: false,
    };
    const plan = planReply(
      request('Title for 3 cats', {
        response_format: { type: 'json_schema', json_schema: { name: 't', schema } },
      }),
    );
    expect(JSON.parse(plan.content)).toEqual({ title: 'Title for ', count: 3 });
    const object = planReply(request('hi', { response_format: { type: 'json_object' } }));
    expect(JSON.parse(object.content)).toHaveProperty('reply');
  });
});

describe('the history stand-in rules', () => {
  const indexRequest = (input: object, withTitle = false) =>
    request(JSON.stringify(input), {
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'exchange_index',
          schema: {
            type: 'object',
            properties: {
              line: { type: 'string' },
              tags: { type: 'array', items: { type: 'string' } },
              ...(withTitle ? { title: { type: 'string' } } : {}),
            },
            required: withTitle ? ['line', 'tags', 'title'] : ['line', 'tags'],
          },
        },
      },
    });

  it('indexes an exchange: the question and the answer start on one line, the most frequent words as tags', () => {
    const plan = planReply(
      indexRequest({
        question: 'What is the capital of Italy?\nI mean the city.',
        answer: 'The capital of Italy is Rome, a city of ' + 'x'.repeat(200),
      }),
    );
    const value = JSON.parse(plan.content) as { line: string; tags: string[] };
    expect(value.line).toMatch(
      /^Q: What is the capital of Italy\? I mean the city\. → A: The capital of Italy is Rome/,
    );
    expect([...value.line].length).toBeLessThanOrEqual(240);
    expect(value.tags).toEqual(['capital', 'italy', 'city']);
    expect(value).not.toHaveProperty('title');
  });

  it('titles from the first words of the first question when the schema asks for a title', () => {
    const plan = planReply(
      indexRequest(
        {
          firstQuestion:
            'Help me plan a week in Rome with two children who love museums and ice cream please',
          question: 'And hotels?',
          answer: 'Near Termini.',
        },
        true,
      ),
    );
    expect(JSON.parse(plan.content)).toEqual({
      line: 'Q: And hotels? → A: Near Termini.',
      tags: ['hotels', 'near', 'termini'],
      title: 'Help me plan a week in Rome with two children who love',
    });
  });

  it('summarises by joining the previous summary and the folded questions, keeping the newest 200 words', () => {
    const summarise = (input: object) =>
      JSON.parse(
        planReply(
          request(JSON.stringify(input), {
            response_format: { type: 'json_schema', json_schema: { name: 'session_summary', schema: {} } },
          }),
        ).content,
      ) as { summary: string };
    expect(
      summarise({
        previousSummary: 'Asked about Rome.',
        exchanges: [
          { question: 'Hotels?', answer: 'a' },
          { question: 'Trains?', answer: '', failed: true },
        ],
      }),
    ).toEqual({ summary: 'Asked about Rome.; Hotels?; Trains?' });

    const long = summarise({
      previousSummary: 'old '.repeat(300),
      exchanges: [{ question: 'newest question' }],
    });
    const words = long.summary.split(' ');
    expect(words).toHaveLength(201);
    expect(words[0]).toBe('…');
    expect(long.summary).toMatch(/old; newest question$/);
  });

  it('falls back to the schema rules when the input is not the expected JSON', () => {
    const plan = planReply(indexRequest({}));
    expect(JSON.parse(plan.content)).toEqual({ line: 'Q: (empty)', tags: ['conversation'] });
    const text = planReply({
      ...indexRequest({}),
      messages: [{ role: 'user', content: 'not json' }],
    });
    expect(JSON.parse(text.content)).toEqual({ line: 'not json', tags: ['not json'] });
  });
});

describe('the conversation search stand-in rules', () => {
  const conversationSearch = {
    type: 'function' as const,
    function: {
      name: SEARCH_CONVERSATION_HISTORY_TOOL,
      description: "Searches the user's earlier conversations",
      parameters: {
        type: 'object',
        properties: { search_query: { type: 'string' }, limit: { type: 'integer' } },
        required: ['search_query'],
      },
    },
  };

  it.each([
    ['What did we decide about my boat last time?', 'decide boat'],
    ['We talked about Porto moorings, remember?', 'porto moorings'],
    ['Remember when I asked about sourdough starters?', 'sourdough starters'],
    ['In an earlier conversation I mentioned my sister Ana', 'sister ana'],
    ['What did I previously say?', 'What did I previously say?'],
  ])('searches past conversations when asked %j, with its topic words', (question, topic) => {
    const plan = planReply(request(question, { tools: [addTool, conversationSearch] }));
    expect(plan.toolCalls).toEqual([
      { name: SEARCH_CONVERSATION_HISTORY_TOOL, arguments: JSON.stringify({ search_query: topic }) },
    ]);
  });

  it('does not search when the tool is not offered, tools are off, another tool is named, or nothing earlier is asked', () => {
    const question = 'What did we talk about last time?';
    expect(planReply(request(question, { tools: [addTool] })).toolCalls).toEqual([]);
    expect(
      planReply(request(question, { tools: [conversationSearch], tool_choice: 'none' })).toolCalls,
    ).toEqual([]);
    expect(
      planReply(
        request(`${question} add_numbers 2 and 3`, { tools: [addTool, conversationSearch] }),
      ).toolCalls.map((call) => call.name),
    ).toEqual(['add_numbers']);
    expect(planReply(request('Tell me about boats', { tools: [conversationSearch] })).toolCalls).toEqual([]);
  });

  it('searches with whatever tool the vocabulary names, putting the topic in its required string parameter', () => {
    const pastChats = {
      type: 'function' as const,
      function: {
        name: 'find_past_chats',
        parameters: {
          type: 'object',
          properties: { max: { type: 'integer' }, scope: { type: 'string' }, q: { type: 'string' } },
          required: ['q'],
        },
      },
    };
    const vocabulary = { ...NO_VOCABULARY, tools: { searchConversationHistory: 'find_past_chats' } };
    const question = 'What did we decide about my boat last time?';
    expect(planReply(request(question, { tools: [pastChats] }), vocabulary).toolCalls).toEqual([
      { name: 'find_past_chats', arguments: JSON.stringify({ q: 'decide boat' }) },
    ]);
    // Without the name the rule does not apply: the product's tool is just another tool, called only when named.
    expect(planReply(request(question, { tools: [conversationSearch] }), NO_VOCABULARY).toolCalls).toEqual(
      [],
    );
    const found = afterSearchWith(pastChats.function.name, JSON.stringify({ conversations: [] }));
    expect(planReply(found, vocabulary).content).toBe(
      'find_past_chats found no earlier conversation about that.',
    );
    expect(planReply(found, NO_VOCABULARY).content).toMatch(/^find_past_chats returned /);
  });

  it('names each conversation found with its title, date and the start of its summary', () => {
    const afterSearch = (result: string): ChatCompletionRequest => ({
      model: 'm',
      tools: [conversationSearch],
      messages: [
        { role: 'user', content: 'What did we talk about last time?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 's1',
              type: 'function',
              function: { name: SEARCH_CONVERSATION_HISTORY_TOOL, arguments: '{"search_query":"x"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 's1', content: result },
      ],
    });
    const found = JSON.stringify({
      search_query: 'x',
      conversations: [
        {
          sessionId: 'a',
          title: 'Boat and tides',
          date: '2026-11-01T09:00:00.000Z',
          summary: 'The user named their boat Aurora.',
        },
        { sessionId: 'b', date: '2026-10-02T09:00:00.000Z', summary: 'x'.repeat(300) },
      ],
    });
    const content = planReply(afterSearch(found)).content;
    expect(content).toBe(
      `search_conversation_history found 2 earlier conversations: "Boat and tides" (2026-11-01: The user named ` +
        `their boat Aurora.); "an untitled conversation" (2026-10-02: ${'x'.repeat(99)}…).`,
    );
    expect(planReply(afterSearch(JSON.stringify({ conversations: [] }))).content).toBe(
      'search_conversation_history found no earlier conversation about that.',
    );
    // An error result is reported as any other tool's.
    expect(planReply(afterSearch('{"error":"Tool failed"}')).content).toBe(
      'search_conversation_history returned {"error":"Tool failed"}.',
    );
  });
});

describe('the knowledge base stand-in rules', () => {
  const conversationSearch = {
    type: 'function' as const,
    function: {
      name: SEARCH_CONVERSATION_HISTORY_TOOL,
      description: 'Searches conversations',
      parameters: {},
    },
  };

  it.each([
    ['What does the handbook say about parental leave?', 'parental leave'],
    ['According to my documents, how long is the notice period?', 'long notice period'],
    ['Is there anything on expense claims in the knowledge base', 'anything expense claims'],
    ['Summarise the document I uploaded', 'summarise'],
    ['What do my documents say?', 'What do my documents say?'],
  ])('searches the knowledge base when asked %j, with its topic words', (question, query) => {
    const plan = planReply(request(question, { tools: [addTool, searchTool] }));
    expect(plan.toolCalls).toEqual([
      { name: SEARCH_KNOWLEDGE_BASE_TOOL, arguments: JSON.stringify({ query }) },
    ]);
  });

  it.each([
    'How do I document a REST API?',
    'Which handbook should I buy for Python?',
    'I uploaded a photo yesterday, how do I crop it?',
    'According to Einstein, what is time?',
    'Where do documents go when I delete them?',
  ])('does not search when asked %j, which names none of the user’s documents', (question) => {
    expect(planReply(request(question, { tools: [addTool, searchTool] })).toolCalls).toEqual([]);
  });

  it.each([
    ['What is in my handbook about sick days?', 'sick days'],
    ['What do my files say about expenses?', 'expenses'],
    ['What do the documents say about travel?', 'travel'],
    ['Summarise the uploaded documents', 'summarise'],
    ['Summarise what I uploaded', 'summarise'],
    ['According to the policy, who approves leave?', 'policy approves leave'],
  ])('searches when asked %j', (question, query) => {
    expect(planReply(request(question, { tools: [searchTool] })).toolCalls).toEqual([
      { name: SEARCH_KNOWLEDGE_BASE_TOOL, arguments: JSON.stringify({ query }) },
    ]);
  });

  it('replies with N words when asked to, though the search is offered', () => {
    const plan = planReply(
      request('Reply with 12 words on how to document a REST API.', { tools: [addTool, searchTool] }),
    );
    expect(plan.toolCalls).toEqual([]);
    expect(plan.content.split(' ')).toHaveLength(12);
  });

  it('does not search when the tool is not offered, tools are off, another tool is named, or no document is mentioned', () => {
    const question = 'What does the handbook say about leave?';
    expect(planReply(request(question, { tools: [addTool] })).toolCalls).toEqual([]);
    expect(planReply(request(question, { tools: [searchTool], tool_choice: 'none' })).toolCalls).toEqual([]);
    expect(
      planReply(request(`${question} add_numbers 2 and 3`, { tools: [addTool, searchTool] })).toolCalls.map(
        (call) => call.name,
      ),
    ).toEqual(['add_numbers']);
    expect(planReply(request('Tell me about leave', { tools: [searchTool] })).toolCalls).toEqual([]);
  });

  it('searches earlier conversations first when the message asks about one and that search is offered', () => {
    const question = 'What did the handbook say last time?';
    expect(
      planReply(request(question, { tools: [searchTool, conversationSearch] })).toolCalls.map((c) => c.name),
    ).toEqual([SEARCH_CONVERSATION_HISTORY_TOOL]);
    expect(planReply(request(question, { tools: [searchTool] })).toolCalls.map((c) => c.name)).toEqual([
      SEARCH_KNOWLEDGE_BASE_TOOL,
    ]);
  });

  it('quotes the best passages, each followed by its citation in square brackets', () => {
    const afterSearch = (result: string): ChatCompletionRequest => ({
      model: 'm',
      tools: [searchTool],
      messages: [
        { role: 'user', content: 'What does the handbook say about leave?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'k1',
              type: 'function',
              function: { name: SEARCH_KNOWLEDGE_BASE_TOOL, arguments: '{"query":"leave"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'k1', content: result },
      ],
    });
    const passage = (text: string, citation: string) => ({ citation, title: 'T', text, score: 0.1 });
    const found = JSON.stringify({
      query: 'leave',
      results: [
        passage('Parents get twenty weeks\nof paid leave.', 'Employee Handbook, p. 4'),
        passage('y'.repeat(300), 'Employee Handbook › Sick leave'),
        passage('Holidays are 25 days.', 'Policies, pp. 2–3'),
        passage('Not quoted.', 'Other'),
      ],
    });
    expect(planReply(afterSearch(found)).content).toBe(
      'search_knowledge_base found: "Parents get twenty weeks of paid leave." [Employee Handbook, p. 4]; ' +
        `"${'y'.repeat(99)}…" [Employee Handbook › Sick leave]; "Holidays are 25 days." [Policies, pp. 2–3].`,
    );
    expect(planReply(afterSearch(JSON.stringify({ query: 'x', results: [] }))).content).toBe(
      'search_knowledge_base found nothing in the knowledge base about that.',
    );
    expect(planReply(afterSearch('{"error":"Tool failed"}')).content).toBe(
      'search_knowledge_base returned {"error":"Tool failed"}.',
    );
  });
});
