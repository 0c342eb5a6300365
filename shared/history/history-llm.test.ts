// The history worker's model calls through the real OpenAI gateway against the scripted model: non-streamed, a
// strict json_schema format named for the offline model, the input as one JSON user message, the answer validated
// and normalised; one that stays out of schema after the gateway's one correction is an error.
import { describe, expect, it } from 'vitest';
import { inputOf, useScriptedGateway } from '../../test/support/scripted-model.js';
import { LlmError } from '../llm/llm-gateway.js';
import {
  EXCHANGE_INDEX_FORMAT,
  EXCHANGE_TEXT_CHARS,
  fallbackIndexLine,
  foldSummary,
  indexExchange,
  SESSION_SUMMARY_FORMAT,
} from './history-llm.js';

const scripted = useScriptedGateway();

describe('indexExchange', () => {
  it('asks for a line and tags with a strict json_schema, and normalises the tags', async () => {
    scripted.replies = [
      { content: '{"line":"Asked for the capital of Italy: Rome.","tags":["Italy"," geography","italy"]}' },
    ];
    const index = await indexExchange(scripted.gateway, { question: 'Capital of Italy?', answer: 'Rome.' });

    expect(index).toEqual({ line: 'Asked for the capital of Italy: Rome.', tags: ['italy', 'geography'] });
    const [request] = scripted.requests;
    expect(request?.stream).not.toBe(true);
    expect(request?.response_format).toEqual({
      type: 'json_schema',
      json_schema: {
        name: EXCHANGE_INDEX_FORMAT,
        strict: true,
        schema: expect.objectContaining({
          type: 'object',
          required: ['line', 'tags'],
          additionalProperties: false,
        }) as unknown,
      },
    });
    expect(request?.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(request?.messages[0]?.content).not.toMatch(/title/);
    expect(inputOf(request)).toEqual({ question: 'Capital of Italy?', answer: 'Rome.' });
  });

  it('asks for the title in the same call when one is due', async () => {
    scripted.replies = [
      { content: '```json\n{"line":"l","tags":["travel"],"title":"  Planning a trip to Rome "}\n```' },
    ];
    const index = await indexExchange(
      scripted.gateway,
      { question: 'And hotels?', answer: 'Near Termini.' },
      { firstQuestion: 'Plan my trip to Rome' },
    );

    expect(index).toEqual({ line: 'l', tags: ['travel'], title: 'Planning a trip to Rome' });
    const [request] = scripted.requests;
    expect(request?.response_format?.json_schema?.schema).toMatchObject({
      required: ['line', 'tags', 'title'],
      properties: { title: { type: 'string', maxLength: 80 } },
    });
    expect(inputOf(request)).toEqual({
      firstQuestion: 'Plan my trip to Rome',
      question: 'And hotels?',
      answer: 'Near Termini.',
    });
  });

  it("drops bidirectional controls and unpaired surrogates from the model's title", async () => {
    scripted.replies = [
      {
        content: JSON.stringify({
          line: 'l',
          tags: ['travel'],
          title: 'Trip \u202Eemor\u202C to \ud83d Rome',
        }),
      },
    ];
    const index = await indexExchange(
      scripted.gateway,
      { question: 'And hotels?', answer: 'Near Termini.' },
      { firstQuestion: 'Plan my trip to Rome' },
    );
    expect(index.title).toBe('Trip emor to Rome');
  });

  it('sends each text cut to a bound, whatever its length', async () => {
    scripted.replies = [{ content: '{"line":"l","tags":["t"]}' }];
    await indexExchange(scripted.gateway, { question: 'q'.repeat(50_000), answer: 'a'.repeat(50_000) });
    const input = inputOf(scripted.requests[0]);
    expect([...String(input['question'])]).toHaveLength(EXCHANGE_TEXT_CHARS);
    expect([...String(input['answer'])]).toHaveLength(EXCHANGE_TEXT_CHARS);
  });

  it('is an LlmError when the answer stays out of schema after one correction', async () => {
    scripted.replies = [
      { content: '{"line":"","tags":[]}' },
      { content: '{"line":"two\\nlines","tags":["a","b","c","d","e","f"]}' },
    ];
    const attempt = indexExchange(scripted.gateway, { question: 'q', answer: 'a' }, { firstQuestion: 'q' });
    await expect(attempt).rejects.toBeInstanceOf(LlmError);
    await expect(attempt).rejects.toThrow(/unusable "exchange_index" JSON/);
    expect(scripted.requests).toHaveLength(2);
    expect(scripted.requests[1]?.messages.at(-1)?.content).toMatch(/line: Too small/);
  });
});

describe('foldSummary', () => {
  it('folds the previous summary and the exchanges into a new summary', async () => {
    scripted.replies = [{ content: '{"summary":"The user plans a trip to Rome and asked about hotels."}' }];
    const summary = await foldSummary(scripted.gateway, 'The user plans a trip to Rome.', [
      { question: 'Hotels?', answer: 'Near Termini.' },
      { question: 'Trains?', answer: '', failed: true },
    ]);

    expect(summary).toBe('The user plans a trip to Rome and asked about hotels.');
    const [request] = scripted.requests;
    expect(request?.response_format?.json_schema).toMatchObject({
      name: SESSION_SUMMARY_FORMAT,
      strict: true,
      schema: { required: ['summary'] },
    });
    expect(inputOf(request)).toEqual({
      previousSummary: 'The user plans a trip to Rome.',
      exchanges: [
        { question: 'Hotels?', answer: 'Near Termini.' },
        { question: 'Trains?', answer: '', failed: true },
      ],
    });
  });

  it('holds the model to 250 words: a longer summary is sent back once for a correction', async () => {
    scripted.replies = [
      { content: JSON.stringify({ summary: 'word '.repeat(300).trim() }) },
      { content: '{"summary":"Short."}' },
    ];
    expect(await foldSummary(scripted.gateway, '', [{ question: 'q', answer: 'a' }])).toBe('Short.');
    expect(scripted.requests[1]?.messages.at(-1)?.content).toMatch(/at most 250 words/);
  });
});

describe('fallbackIndexLine', () => {
  it('is the question on one line, cut to the line limit', () => {
    expect(fallbackIndexLine('  Where is\n\nRome? ')).toBe('Q: Where is Rome?');
    expect([...fallbackIndexLine('x'.repeat(1_000))]).toHaveLength(240);
  });
});
