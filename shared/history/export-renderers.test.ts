// The export's renderers (Markdown and JSON, exact text) and the export's file name.
import { describe, expect, it } from 'vitest';
import {
  exportFileName,
  renderJsonExport,
  renderMarkdownExport,
  type ExportableConversation,
} from './export-renderers.js';

const conversation: ExportableConversation = {
  sessionId: '6f1c1c9e-2b5a-4c1e-9a53-0d2a5e1f7b10',
  title: 'Adding\nnumbers',
  titleSource: 'model',
  createdAt: '2026-11-22T10:00:00.000Z',
  lastActivity: '2026-11-22T10:01:05.000Z',
  messageCount: 4,
  visibleMessageCount: 4,
  preview: 'It failed.',
  messages: [
    {
      messageId: 'a_user',
      chatMessageId: 'a',
      role: 'user',
      content: 'add 2 and 3',
      timestamp: '2026-11-22T10:00:00.000Z',
      ordinal: 0,
    },
    {
      messageId: 'a_assistant',
      chatMessageId: 'a',
      role: 'assistant',
      content: '2 + 3 = **5**.\n',
      timestamp: '2026-11-22T10:00:02.000Z',
      toolCalls: [
        {
          id: 'call_1',
          name: 'add_numbers',
          arguments: '{"a":2,"b":3}',
          result: '5',
          isError: false,
          round: 0,
        },
        {
          id: 'call_2',
          name: 'shell',
          arguments: 'not json ``` here',
          result: 'unknown tool',
          isError: true,
          round: 1,
        },
      ],
      finishReason: 'stop',
      sources: [
        {
          chunkId: 'doc:4',
          documentId: 'a'.repeat(32),
          title: 'Arithmetic Primer',
          pages: [4],
          citation: 'Arithmetic Primer, p. 4',
          excerpt: 'Adding two numbers\ngives their sum.',
          score: 0.03,
        },
      ],
      ordinal: 1,
    },
    {
      messageId: 'b_user',
      chatMessageId: 'b',
      role: 'user',
      content: 'and now?',
      timestamp: '2026-11-22T10:01:05.000Z',
      failure: { code: 'model_unavailable', message: 'The model did not answer.\nTry again.' },
      ordinal: 2,
    },
  ],
};

describe('renderMarkdownExport', () => {
  it('renders the title, each message with role and time, its sources, tool calls in fences, and failures', () => {
    expect(renderMarkdownExport(conversation)).toBe(
      [
        '# Adding numbers',
        '',
        '- Conversation: `6f1c1c9e-2b5a-4c1e-9a53-0d2a5e1f7b10`',
        '- Started: 2026-11-22T10:00:00.000Z',
        '- Last activity: 2026-11-22T10:01:05.000Z',
        '- Messages: 3',
        '',
        '## User · 2026-11-22T10:00:00.000Z',
        '',
        'add 2 and 3',
        '',
        '## Assistant · 2026-11-22T10:00:02.000Z',
        '',
        '2 + 3 = **5**.',
        '',
        '**Sources:**',
        '',
        '- Arithmetic Primer, p. 4: “Adding two numbers gives their sum.”',
        '',
        '**Tool call** `add_numbers` (round 0), arguments:',
        '',
        '```json',
        '{',
        '  "a": 2,',
        '  "b": 3',
        '}',
        '```',
        '',
        'Result:',
        '',
        '```text',
        '5',
        '```',
        '',
        '**Tool call** `shell` (round 1), arguments:',
        '',
        // The text holds a run of three backticks: the fence is longer, so it cannot be closed early.
        '````text',
        'not json ``` here',
        '````',
        '',
        'Result (error):',
        '',
        '```text',
        'unknown tool',
        '```',
        '',
        '## User · 2026-11-22T10:01:05.000Z',
        '',
        'and now?',
        '',
        '> **This turn failed** (model_unavailable): The model did not answer. Try again.',
        '',
      ].join('\n'),
    );
  });

  it('renders the system prompt first, fenced, since it may hold headings of its own', () => {
    const systemPrompt = {
      content: 'Be brief.\n\n## Their interests\n- Sailing.',
      personalised: true,
      createdAt: '2026-11-22T10:00:00.000Z',
    };
    const text = renderMarkdownExport({ ...conversation, systemPrompt, messages: [] });
    expect(text).toBe(
      [
        '# Adding numbers',
        '',
        '- Conversation: `6f1c1c9e-2b5a-4c1e-9a53-0d2a5e1f7b10`',
        '- Started: 2026-11-22T10:00:00.000Z',
        '- Last activity: 2026-11-22T10:01:05.000Z',
        '- Messages: 0',
        '',
        '## System prompt · 2026-11-22T10:00:00.000Z',
        '',
        "Personalised from the user's profile:",
        '',
        '```text',
        'Be brief.',
        '',
        '## Their interests',
        '- Sailing.',
        '```',
        '',
      ].join('\n'),
    );
    expect(
      renderMarkdownExport({ ...conversation, systemPrompt: { ...systemPrompt, personalised: false } }),
    ).toMatch(/## System prompt · [^\n]+\n\nThe basic prompt:\n/);
  });

  it("lists a message's attachments by name, type, size and id, never a URL", () => {
    const first = conversation.messages[0]!;
    const attached = {
      ...conversation,
      messages: [
        {
          ...first,
          attachments: [
            {
              id: `att-${'0'.repeat(32)}`,
              name: 'chart.png',
              mediaType: 'image/png',
              size: 1234,
              width: 64,
              height: 48,
            },
          ],
        },
      ],
    };
    expect(renderMarkdownExport(attached)).toContain(
      `**Attachments:**\n\n- chart.png (image/png, 1234 bytes, 64×48): \`att-${'0'.repeat(32)}\``,
    );
  });

  it('gives an untitled, empty conversation a heading of its own', () => {
    expect(renderMarkdownExport({ ...conversation, title: '  ', messages: [] })).toMatch(
      /^# Conversation\n\n.*- Messages: 0\n$/s,
    );
  });
});

describe('renderJsonExport', () => {
  it('is the summary and every message, as the conversation API answers them', () => {
    const text = renderJsonExport(conversation);
    expect(text.endsWith('}\n')).toBe(true);
    expect(JSON.parse(text)).toEqual(conversation);
    const systemPrompt = { content: 'Be brief.', personalised: false, createdAt: '2026-11-22T10:00:00.000Z' };
    expect(JSON.parse(renderJsonExport({ ...conversation, systemPrompt }))).toEqual({
      ...conversation,
      systemPrompt,
    });
  });
});

describe('exportFileName', () => {
  it('keeps letters, digits and a few signs, folds accents, and is never empty', () => {
    expect(exportFileName('Adding numbers', 'md')).toBe('Adding-numbers.md');
    expect(exportFileName('Crème brûlée: "recipe" / v2', 'json')).toBe('Creme-brulee-recipe-v2.json');
    expect(exportFileName('..\\..//etc/passwd', 'md')).toBe('etc-passwd.md');
    expect(exportFileName('日本語', 'md')).toBe('conversation.md');
    expect(exportFileName('x'.repeat(200), 'md')).toBe(`${'x'.repeat(80)}.md`);
  });
});
