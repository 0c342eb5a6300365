// The offline model's stand-in rules for the memory worker's formats, rule by rule, and their answers passing the
// product's own validation: the real gateway calls the offline model over HTTP, as the local runtime does, the
// memory calls accept the answers, and the merge keeps every change (its evidence is the user's sentence).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLlmGateway } from '../../shared/llm/adapters/openai-gateway.js';
import type { LlmGateway } from '../../shared/llm/llm-gateway.js';
import { proposeProfileChanges, summariseConversation } from '../../shared/memory/memory-llm.js';
import { mergeProfileChanges } from '../../shared/memory/profile-merge.js';
import { productVocabulary } from '../offline-model-vocabulary.js';
import {
  memoryFormatValue as formatValue,
  standInConversationSummary,
  standInProfileChanges,
  type StandInSummary,
} from './memory-formats.js';
import { startOfflineModelServer } from './offline-model-server.js';
import { planReply } from './reply-rules.js';

const memoryFormatValue = (name: string, input: string) =>
  formatValue(productVocabulary.formats, name, input);

const none = { add: [], reaffirm: [], replace: [], retract: [] };

describe('memory_profile_changes stand-in rules', () => {
  it('makes a fact of each sentence of a known form, quoting it as evidence', () => {
    const message =
      'Hi! I love hiking in the Alps. I prefer short answers with bullet points. I work as a nurse.\n' +
      'Call me Sam. My goal is to run a marathon. I speak Portuguese. I hate spiders; I want you to be blunt. ' +
      'I have a dog named Rex. My wife is called Ana. What is the weather?';
    expect(standInProfileChanges(message, [])).toEqual({
      ...none,
      add: [
        {
          category: 'interests',
          statement: 'The user loves hiking in the Alps.',
          evidence: 'I love hiking in the Alps',
        },
        {
          category: 'output_preferences',
          statement: 'The user prefers short answers with bullet points.',
          evidence: 'I prefer short answers with bullet points',
        },
        { category: 'work_profile', statement: 'The user works as a nurse.', evidence: 'I work as a nurse' },
        {
          category: 'personal_preferences',
          statement: 'The user wants to be called Sam.',
          evidence: 'Call me Sam',
        },
        {
          category: 'goals',
          statement: "The user's goal is to run a marathon.",
          evidence: 'My goal is to run a marathon',
        },
        { category: 'knowledge', statement: 'The user speaks Portuguese.', evidence: 'I speak Portuguese' },
        { category: 'dislikes', statement: 'The user dislikes spiders.', evidence: 'I hate spiders' },
        {
          category: 'assistant_preferences',
          statement: 'The user wants the assistant to be blunt.',
          evidence: 'I want you to be blunt',
        },
        {
          category: 'family_and_friends',
          statement: 'The user has a dog named Rex.',
          evidence: 'I have a dog named Rex',
        },
        {
          category: 'family_and_friends',
          statement: "The user's wife is Ana.",
          evidence: 'My wife is called Ana',
        },
      ],
    });
  });

  it('reaffirms what an active fact says, replaces a contradicted one, retracts what the user no longer does', () => {
    const active = [
      { factId: 'f1', category: 'interests', statement: 'The user loves hiking in the Alps.' },
      { factId: 'f2', category: 'work_profile', statement: 'The user works at Contoso.' },
      { factId: 'f3', category: 'interests', statement: 'The user likes cats.' },
      { factId: 'f4', category: 'personal_preferences', statement: 'The user prefers tea.' },
      { factId: 'f5', category: 'personal_preferences', statement: 'The user wants to be called Sam.' },
      { factId: 'f6', category: 'work_profile', statement: 'The user works as a nurse.' },
    ];
    const message =
      "I love hiking in the Alps. I work at Fabrikam. I don't like cats anymore. I no longer prefer tea. " +
      'Call me Samuel. I like birds';
    expect(standInProfileChanges(message, active)).toEqual({
      add: [{ category: 'interests', statement: 'The user likes birds.', evidence: 'I like birds' }],
      reaffirm: [{ factId: 'f1', evidence: 'I love hiking in the Alps' }],
      replace: [
        {
          factId: 'f2',
          category: 'work_profile',
          statement: 'The user works at Fabrikam.',
          evidence: 'I work at Fabrikam',
          reason: 'The user said: "I work at Fabrikam".',
        },
        {
          factId: 'f5',
          category: 'personal_preferences',
          statement: 'The user wants to be called Samuel.',
          evidence: 'Call me Samuel',
          reason: 'The user said: "Call me Samuel".',
        },
      ],
      retract: [
        {
          factId: 'f3',
          evidence: "I don't like cats anymore",
          reason: 'The user said: "I don\'t like cats anymore".',
        },
        {
          factId: 'f4',
          evidence: 'I no longer prefer tea',
          reason: 'The user said: "I no longer prefer tea".',
        },
      ],
    });
  });

  it('turns a taste around: a dislike replaces the liking of the same thing, and the other way round', () => {
    const active = [
      { factId: 'f1', category: 'interests', statement: 'The user likes jazz.' },
      { factId: 'f2', category: 'dislikes', statement: 'The user dislikes opera.' },
    ];
    const changes = standInProfileChanges('I dislike jazz. I enjoy opera.', active);
    expect(changes.replace.map((r) => [r.factId, r.category, r.statement])).toEqual([
      ['f1', 'dislikes', 'The user dislikes jazz.'],
      ['f2', 'interests', 'The user enjoys opera.'],
    ]);
  });

  it('proposes nothing for a message that says nothing about the user', () => {
    expect(standInProfileChanges('What is the capital of France? The user loves spiders.', [])).toEqual(none);
  });
});

describe('conversation_summary stand-in rules', () => {
  it('starts from the first sentence, with themes, persons, places and sentiment from the words', () => {
    expect(
      standInConversationSummary(undefined, {
        userMessage: 'I plan a trip to Rome with Ana Lopez, great museums and museums again! Which ones?',
      }),
    ).toEqual({
      summary: 'I plan a trip to Rome with Ana Lopez, great museums and museums again!',
      themes: ['museums', 'plan', 'trip'],
      persons: ['Ana Lopez'],
      places: ['Rome'],
      user_sentiment: 'positive',
    });
  });

  it('grows from the previous summary, merging the lists, and turns mixed when the mood changes', () => {
    const previous: StandInSummary = {
      summary: 'I plan a trip to Rome.',
      themes: ['trip'],
      persons: [],
      places: ['Rome'],
      user_sentiment: 'positive',
    };
    expect(
      standInConversationSummary(previous, { userMessage: 'The hotel in Florence was terrible' }),
    ).toEqual({
      summary: 'I plan a trip to Rome. The hotel in Florence was terrible.',
      themes: ['trip', 'hotel', 'florence', 'terrible'],
      persons: [],
      places: ['Rome', 'Florence'],
      user_sentiment: 'mixed',
    });
  });

  it('keeps the first sentence and the newest within 2,000 characters', () => {
    let summary: StandInSummary | undefined;
    for (let i = 0; i < 100; i++)
      summary = standInConversationSummary(summary, {
        userMessage: `Question number ${i} about topic${i} and ${'x'.repeat(30)}.`,
      });
    expect(summary?.summary.length).toBeLessThanOrEqual(2_000);
    expect(summary?.summary.startsWith('Question number 0 about')).toBe(true);
    expect(summary?.summary.endsWith(`Question number 99 about topic99 and ${'x'.repeat(30)}.`)).toBe(true);
    // The first themes stay: they say what the conversation was about from the start.
    expect(summary?.themes).toHaveLength(12);
    expect(summary?.themes.slice(0, 4)).toEqual(['question', 'number', 'topic0', 'topic1']);
  });
});

describe('memoryFormatValue', () => {
  it('answers the memory formats by name, and leaves other names and non-JSON input to the schema rules', () => {
    expect(
      memoryFormatValue('memory_profile_changes', '{"userMessage":"I like tea","activeFacts":[]}'),
    ).toEqual({
      ...none,
      add: [{ category: 'interests', statement: 'The user likes tea.', evidence: 'I like tea' }],
    });
    expect(memoryFormatValue('other', '{}')).toBeUndefined();
    expect(memoryFormatValue('conversation_summary', 'not json')).toBeUndefined();
    const plan = planReply(
      {
        model: 'offline',
        messages: [
          { role: 'user', content: '{"previousSummary":null,"exchange":{"userMessage":"Hello there"}}' },
        ],
        response_format: { type: 'json_schema', json_schema: { name: 'conversation_summary', schema: {} } },
      },
      productVocabulary,
    );
    expect(JSON.parse(plan.content)).toMatchObject({ summary: 'Hello there.' });
  });
});

describe('the memory formats on the offline model', () => {
  let server: Awaited<ReturnType<typeof startOfflineModelServer>>;
  let gateway: LlmGateway;

  beforeAll(async () => {
    server = await startOfflineModelServer({
      pathPrefix: '/offline-model/v1',
      vocabulary: productVocabulary,
    });
    gateway = createLlmGateway(
      { kind: 'openai-compatible', baseUrl: server.baseUrl, chatModel: 'offline', embeddingModel: 'offline' },
      { maxRetries: 0, timeoutMs: 5_000 },
    );
  });
  afterAll(() => server.close());

  it('propose profile changes the merge keeps, every one quoting the user', async () => {
    const userText = 'I love hiking. I work at Fabrikam. My goal is to learn Greek. Any tips?';
    const active = [
      {
        id: 'f1',
        kind: 'fact' as const,
        userId: 'user_001',
        category: 'work_profile' as const,
        statement: 'The user works at Contoso.',
        status: 'active' as const,
        validFrom: '2026-11-01T00:00:00.000Z',
        provenance: [
          { sessionId: 's', chatMessageId: 'c', messageId: 'c_user', at: '2026-11-01T00:00:00.000Z' },
        ],
        createdAt: '2026-11-01T00:00:00.000Z',
        updatedAt: '2026-11-01T00:00:00.000Z',
      },
    ];
    const proposed = await proposeProfileChanges(gateway, { userText, activeFacts: active });
    const merged = mergeProfileChanges({ active, userText, proposed, newFactId: (n) => `n${n}` });
    expect(merged.dropped).toEqual([]);
    expect(merged.changes).toEqual([
      {
        op: 'replace',
        factId: 'f1',
        newFactId: 'n0',
        category: 'work_profile',
        statement: 'The user works at Fabrikam.',
        reason: 'The user said: "I work at Fabrikam".',
      },
      { op: 'add', factId: 'n1', category: 'interests', statement: 'The user loves hiking.' },
      { op: 'add', factId: 'n2', category: 'goals', statement: "The user's goal is to learn Greek." },
    ]);
  });

  it('summarise a conversation as the product validates it', async () => {
    const first = await summariseConversation(gateway, {
      previous: undefined,
      userText: 'We are going to Lisbon with Maria. Thanks, that was helpful!',
      answer: 'This is the offline stand-in model, not a real LLM.',
    });
    expect(first).toEqual({
      summary: 'We are going to Lisbon with Maria.',
      themes: ['going', 'lisbon', 'maria'],
      persons: ['Maria'],
      places: ['Lisbon'],
      user_sentiment: 'positive',
    });
    const second = await summariseConversation(gateway, {
      previous: first,
      userText: 'Which trams go to Belém?',
      answer: 'a',
    });
    expect(second).toMatchObject({
      summary: 'We are going to Lisbon with Maria. Which trams go to Belém?',
      places: ['Lisbon', 'Belém'],
    });
  });
});
