// The memory worker's model calls through the real OpenAI gateway against the scripted model: each goes out
// non-streamed with a strict json_schema response format and one JSON user message, and an answer out of schema
// after one correction is an LlmError.
import { describe, expect, it } from 'vitest';
import { inputOf, useScriptedGateway } from '../../test/support/scripted-model.js';
import { LlmError } from '../llm/llm-gateway.js';
import {
  CONVERSATION_SUMMARY_FORMAT,
  PROFILE_CHANGES_FORMAT,
  PROFILE_TEXT_CHARS,
  proposeProfileChanges,
  summariseConversation,
  SUMMARY_TEXT_CHARS,
} from './memory-llm.js';

const scripted = useScriptedGateway();

const noChanges = { add: [], reaffirm: [], replace: [], retract: [] };

describe('proposeProfileChanges', () => {
  it('sends the user text and the active facts only, and asks for the four lists with a strict json_schema', async () => {
    const proposal = {
      ...noChanges,
      add: [{ category: 'interests', statement: 'The user loves hiking.', evidence: 'I love hiking' }],
      replace: [
        {
          factId: 'f1',
          category: 'work_profile',
          statement: 'The user works at Fabrikam.',
          evidence: 'I now work at Fabrikam',
          reason: 'The user changed jobs.',
        },
      ],
    };
    scripted.replies = [{ content: JSON.stringify(proposal) }];
    const result = await proposeProfileChanges(scripted.gateway, {
      userText: 'I love hiking. I now work at Fabrikam.',
      activeFacts: [{ id: 'f1', category: 'work_profile', statement: 'The user works at Contoso.' }],
    });

    expect(result).toEqual(proposal);
    const [request] = scripted.requests;
    expect(request?.stream).not.toBe(true);
    expect(request?.response_format).toEqual({
      type: 'json_schema',
      json_schema: {
        name: PROFILE_CHANGES_FORMAT,
        strict: true,
        schema: expect.objectContaining({
          type: 'object',
          required: ['add', 'reaffirm', 'replace', 'retract'],
          additionalProperties: false,
        }) as unknown,
      },
    });
    // Instructions, then the input: no assistant turn, no tool message, no conversation system prompt.
    expect(request?.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(request?.messages[0]?.content).toMatch(
      /only what the user says about themselves|Record only what/,
    );
    expect(inputOf(request)).toEqual({
      userMessage: 'I love hiking. I now work at Fabrikam.',
      activeFacts: [{ factId: 'f1', category: 'work_profile', statement: 'The user works at Contoso.' }],
    });
  });

  it('cuts the user text to a bound', async () => {
    scripted.replies = [{ content: JSON.stringify(noChanges) }];
    await proposeProfileChanges(scripted.gateway, { userText: 'x'.repeat(20_000), activeFacts: [] });
    expect([...String(inputOf(scripted.requests[0])['userMessage'])]).toHaveLength(PROFILE_TEXT_CHARS);
  });

  it('is an LlmError when the answer stays out of schema after one correction', async () => {
    const bad = JSON.stringify({
      ...noChanges,
      add: [{ category: 'hobbies', statement: 'x', evidence: 'x' }],
    });
    scripted.replies = [{ content: bad }, { content: bad }];
    const attempt = proposeProfileChanges(scripted.gateway, { userText: 'x', activeFacts: [] });
    await expect(attempt).rejects.toBeInstanceOf(LlmError);
    await expect(attempt).rejects.toThrow(/unusable "memory_profile_changes" JSON/);
    expect(scripted.requests[1]?.messages.at(-1)?.content).toMatch(/add\.0\.category/);
  });
});

describe('summariseConversation', () => {
  it('sends the previous summary and the exchange, and normalises the lists', async () => {
    scripted.replies = [
      {
        content: JSON.stringify({
          summary: ' The user plans a trip to Rome with Ana and asked about hotels. ',
          themes: ['Travel', 'travel', ' hotels ', ''],
          persons: ['Ana'],
          places: ['Rome', 'Termini'],
          user_sentiment: 'positive',
        }),
      },
    ];
    const previous = {
      summary: 'The user plans a trip to Rome.',
      themes: ['travel'],
      persons: [],
      places: ['Rome'],
      user_sentiment: 'neutral' as const,
    };
    const summary = await summariseConversation(scripted.gateway, {
      previous,
      userText: 'Hotels near Termini for me and Ana?',
      answer: 'Try the Hotel Roma.',
    });

    expect(summary).toEqual({
      summary: 'The user plans a trip to Rome with Ana and asked about hotels.',
      themes: ['Travel', 'hotels'],
      persons: ['Ana'],
      places: ['Rome', 'Termini'],
      user_sentiment: 'positive',
    });
    const [request] = scripted.requests;
    expect(request?.response_format?.json_schema).toMatchObject({
      name: CONVERSATION_SUMMARY_FORMAT,
      strict: true,
      schema: { required: ['summary', 'themes', 'persons', 'places', 'user_sentiment'] },
    });
    expect(request?.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(inputOf(request)).toEqual({
      previousSummary: previous,
      exchange: {
        userMessage: 'Hotels near Termini for me and Ana?',
        assistantAnswer: 'Try the Hotel Roma.',
      },
    });
  });

  it('starts from null, cuts each text to a bound, and has a bad sentiment corrected once', async () => {
    const answer = { summary: 's', themes: [], persons: [], places: [] };
    scripted.replies = [
      { content: JSON.stringify({ ...answer, user_sentiment: 'happy' }) },
      { content: JSON.stringify({ ...answer, user_sentiment: 'positive' }) },
    ];
    const summary = await summariseConversation(scripted.gateway, {
      previous: undefined,
      userText: 'q'.repeat(10_000),
      answer: 'a'.repeat(10_000),
    });
    expect(summary.user_sentiment).toBe('positive');
    const input = inputOf(scripted.requests[0]) as {
      previousSummary: unknown;
      exchange: { userMessage: string; assistantAnswer: string };
    };
    expect(input.previousSummary).toBeNull();
    expect([...input.exchange.userMessage]).toHaveLength(SUMMARY_TEXT_CHARS);
    expect([...input.exchange.assistantAnswer]).toHaveLength(SUMMARY_TEXT_CHARS);
    expect(scripted.requests[1]?.messages.at(-1)?.content).toMatch(/user_sentiment/);
  });
});
