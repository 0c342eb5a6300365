import { describe, expect, it } from 'vitest';

import { assistantMessageId, userMessageId } from '../conversation/turn-ids.js';
import type { ConversationMessage } from '../conversation/messages.js';
import { BASIC_SYSTEM_PROMPT, buildPrompt, digestMessage, type PromptDigest } from './prompt.js';
import { estimateTokens, imageTokens, messageTokens } from '../conversation/tokens.js';
import type { MessageAttachment } from '../message-attachments.js';

function user(chatMessageId: string, content: string): ConversationMessage {
  return {
    messageId: userMessageId(chatMessageId),
    chatMessageId,
    role: 'user',
    content,
    timestamp: '2025-01-01T00:00:00.000Z',
  };
}

function assistant(chatMessageId: string, content: string): ConversationMessage {
  return {
    messageId: assistantMessageId(chatMessageId),
    chatMessageId,
    role: 'assistant',
    content,
    timestamp: '2025-01-01T00:00:01.000Z',
  };
}

/** Tokens of one message as buildPrompt counts them (estimate plus per-message overhead). */
const cost = (text: string) => estimateTokens(text) + 4;

const history: ConversationMessage[] = [
  user('c1', 'first question'),
  assistant('c1', 'first answer'),
  user('c2', 'second question'),
  assistant('c2', 'second answer'),
  user('c3', 'third question'),
  assistant('c3', 'third answer'),
];

describe('buildPrompt', () => {
  it('sends system, history and the new message unchanged when under budget', () => {
    const built = buildPrompt({ systemPrompt: 'sys', history, userText: 'new', tokenBudget: 10_000 });
    expect(built.messages).toEqual([
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'first question' },
      { role: 'assistant', content: 'first answer' },
      { role: 'user', content: 'second question' },
      { role: 'assistant', content: 'second answer' },
      { role: 'user', content: 'third question' },
      { role: 'assistant', content: 'third answer' },
      { role: 'user', content: 'new' },
    ]);
    expect(built.includedMessages).toBe(6);
    expect(built.droppedMessages).toBe(0);
    const all = ['sys', 'new', ...history.map((m) => m.content)];
    expect(built.estimatedTokens).toBe(all.reduce((total, text) => total + cost(text), 0));
  });

  it('replays only the text of earlier turns and leaves out assistant messages without text', () => {
    const withTools: ConversationMessage[] = [
      user('c1', 'add 2 and 3'),
      {
        ...assistant('c1', 'The sum is 5.'),
        toolCalls: [
          {
            id: 't1',
            name: 'add_numbers',
            arguments: '{"a":2,"b":3}',
            result: '{"sum":5}',
            isError: false,
            round: 1,
          },
        ],
        finishReason: 'stop',
      },
      user('c2', 'and then?'),
      assistant('c2', ''),
    ];
    const built = buildPrompt({
      systemPrompt: 'sys',
      history: withTools,
      userText: 'hello',
      tokenBudget: 10_000,
    });
    expect(built.messages).toEqual([
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'add 2 and 3' },
      { role: 'assistant', content: 'The sum is 5.' },
      { role: 'user', content: 'and then?' },
      { role: 'user', content: 'hello' },
    ]);
    expect(built.includedMessages).toBe(3);
  });

  it('drops the oldest whole turns first when over budget', () => {
    const full = buildPrompt({ systemPrompt: 'sys', history, userText: 'new', tokenBudget: 10_000 });
    // One token short of everything: the first turn (question and answer) goes, nothing else.
    const built = buildPrompt({
      systemPrompt: 'sys',
      history,
      userText: 'new',
      tokenBudget: full.estimatedTokens - 1,
    });
    expect(built.messages.map((m) => m.content)).toEqual([
      'sys',
      'second question',
      'second answer',
      'third question',
      'third answer',
      'new',
    ]);
    expect(built.droppedMessages).toBe(2);
    expect(built.includedMessages).toBe(4);
    expect(built.estimatedTokens).toBe(full.estimatedTokens - cost('first question') - cost('first answer'));
    expect(built.estimatedTokens).toBeLessThanOrEqual(full.estimatedTokens - 1);
  });

  it('keeps everything when the total is exactly the budget, and trims at one token less', () => {
    const full = buildPrompt({ systemPrompt: 'sys', history, userText: 'new', tokenBudget: 10_000 });
    const exact = buildPrompt({
      systemPrompt: 'sys',
      history,
      userText: 'new',
      tokenBudget: full.estimatedTokens,
    });
    expect(exact.droppedMessages).toBe(0);
    expect(exact.estimatedTokens).toBe(full.estimatedTokens);

    const remaining = full.estimatedTokens - cost('first question') - cost('first answer');
    const atTrimmed = buildPrompt({ systemPrompt: 'sys', history, userText: 'new', tokenBudget: remaining });
    expect(atTrimmed.droppedMessages).toBe(2);
    expect(atTrimmed.estimatedTokens).toBe(remaining);
  });

  it('drops a turn whose user message has no reply as a whole turn of its own', () => {
    const failed: ConversationMessage[] = [
      user('c1', 'lost question'),
      user('c2', 'q'),
      assistant('c2', 'a'),
    ];
    const budget = cost('sys') + cost('new') + cost('q') + cost('a');
    const built = buildPrompt({ systemPrompt: 'sys', history: failed, userText: 'new', tokenBudget: budget });
    expect(built.messages.map((m) => m.content)).toEqual(['sys', 'q', 'a', 'new']);
    expect(built.droppedMessages).toBe(1);
  });

  it('never drops the system prompt or the new user message, even when they alone exceed the budget', () => {
    const built = buildPrompt({
      systemPrompt: BASIC_SYSTEM_PROMPT,
      history,
      userText: 'a long new message '.repeat(20),
      tokenBudget: 10,
    });
    expect(built.messages).toEqual([
      { role: 'system', content: BASIC_SYSTEM_PROMPT },
      { role: 'user', content: 'a long new message '.repeat(20) },
    ]);
    expect(built.droppedMessages).toBe(6);
    expect(built.includedMessages).toBe(0);
    expect(built.estimatedTokens).toBe(cost(BASIC_SYSTEM_PROMPT) + cost('a long new message '.repeat(20)));
  });

  it('trims CJK history by its byte-based estimate', () => {
    const cjk = [
      user('c1', '你好世界'),
      assistant('c1', '你好'),
      user('c2', '再见'),
      assistant('c2', '再见'),
    ];
    // System 'sys' (1+4) + new '谢谢' (2+4) + second turn (2+4)*2 = 23; the first turn (4+4 + 2+4) does not fit.
    const built = buildPrompt({ systemPrompt: 'sys', history: cjk, userText: '谢谢', tokenBudget: 23 });
    expect(built.messages.map((m) => m.content)).toEqual(['sys', '再见', '再见', '谢谢']);
    expect(built.estimatedTokens).toBe(23);
  });

  it('has a basic system prompt that mentions tools', () => {
    expect(BASIC_SYSTEM_PROMPT).toMatch(/tool/i);
  });
});

describe('buildPrompt with the conversation digest', () => {
  /** The history as committed: c1 is ordinals 0-1, c2 2-3, c3 4-5. */
  const committed = history.map((message, ordinal) => ({ ...message, ordinal }));
  const digest: PromptDigest = {
    summary: 'The user asked about two things.',
    summarizedThrough: 2,
    recentExchanges: [
      {
        exchangeId: 'c1',
        ordinal: 0,
        line: 'Q: first question; A: first answer',
        tags: ['first', 'intro'],
        at: 't',
      },
    ],
  };

  it('adds the summary and the exchange lines as a second system message, and leaves out what it summarises', () => {
    const built = buildPrompt({
      systemPrompt: 'sys',
      history: committed,
      userText: 'new',
      tokenBudget: 10_000,
      digest,
    });
    expect(built.messages.map((m) => m.role)).toEqual([
      'system',
      'system',
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
    ]);
    const memory = built.messages[1]!.content;
    expect(memory).toContain(
      'Summary of the earlier part of this conversation: The user asked about two things.',
    );
    expect(memory).toContain(
      'Earlier exchanges (id: line [tags]):\n- c1: Q: first question; A: first answer [first, intro]',
    );
    expect(memory).toMatch(/retrieve_past_answer with its exchange id/);
    expect(memory).toMatch(/lookup_past_conversation with the topic/);
    expect(built.messages.slice(2).map((m) => m.content)).toEqual([
      'second question',
      'second answer',
      'third question',
      'third answer',
      'new',
    ]);
    expect(built.includedMessages).toBe(4);
    expect(built.droppedMessages).toBe(0);
    expect(built.history).toEqual({ fromMessageId: 'c2_user', toMessageId: 'c3_assistant' });
  });

  it('counts the digest message in the budget', () => {
    const full = buildPrompt({
      systemPrompt: 'sys',
      history: committed,
      userText: 'new',
      tokenBudget: 10_000,
      digest,
    });
    const memoryCost = cost(full.messages[1]!.content);
    expect(full.estimatedTokens).toBe(
      cost('sys') +
        memoryCost +
        cost('new') +
        ['second question', 'second answer', 'third question', 'third answer'].reduce(
          (t, x) => t + cost(x),
          0,
        ),
    );
    const trimmed = buildPrompt({
      systemPrompt: 'sys',
      history: committed,
      userText: 'new',
      tokenBudget: full.estimatedTokens - 1,
      digest,
    });
    expect(trimmed.messages.map((m) => m.content).slice(2)).toEqual([
      'third question',
      'third answer',
      'new',
    ]);
    expect(trimmed.droppedMessages).toBe(2);
  });

  it('keeps messages without an ordinal, which are not committed yet', () => {
    const built = buildPrompt({
      systemPrompt: 'sys',
      history: [...committed.slice(0, 4), ...history.slice(4)],
      userText: 'new',
      tokenBudget: 10_000,
      digest: { ...digest, summarizedThrough: 6 },
    });
    expect(built.messages.slice(2).map((m) => m.content)).toEqual(['third question', 'third answer', 'new']);
  });

  it('adds nothing for an empty digest, and shows only the lines when there is no summary yet', () => {
    const empty = { summary: '', summarizedThrough: 0, recentExchanges: [] };
    expect(digestMessage(empty)).toBeUndefined();
    expect(
      buildPrompt({
        systemPrompt: 'sys',
        history: committed,
        userText: 'new',
        tokenBudget: 10_000,
        digest: empty,
      }),
    ).toEqual(buildPrompt({ systemPrompt: 'sys', history: committed, userText: 'new', tokenBudget: 10_000 }));
    const linesOnly = digestMessage({ ...digest, summary: ' ' })?.content;
    expect(linesOnly).not.toContain('Summary');
    expect(linesOnly).toContain('- c1: ');
  });

  it('shows only the newest exchange lines', () => {
    const many = Array.from({ length: 30 }, (_, i) => ({
      exchangeId: `x${i}`,
      ordinal: i * 2,
      line: `line ${i}`,
      tags: [],
      at: 't',
    }));
    const content =
      digestMessage({ summary: 's', summarizedThrough: 60, recentExchanges: many })?.content ?? '';
    expect(content).not.toContain('- x9: ');
    expect(content).toContain('- x10: line 10 []');
    expect(content).toContain('- x29: line 29 []');
  });
});

describe('buildPrompt with files', () => {
  const photo: MessageAttachment = {
    id: `att-${'9'.repeat(32)}`,
    name: 'p.jpg',
    mediaType: 'image/jpeg',
    size: 200_000,
    width: 2000,
    height: 1500,
  };
  const withPhoto = (chatMessageId: string, content: string): ConversationMessage => ({
    ...user(chatMessageId, content),
    attachments: [photo],
  });
  const turns: ConversationMessage[] = [
    withPhoto('c1', 'old photo'),
    assistant('c1', 'a1'),
    withPhoto('c2', 'recent photo'),
    assistant('c2', 'a2'),
  ];
  const rules = { imageTurns: 2, textTokens: 1_000 };

  it('counts a recent image by its tiles and an older one by the caption that stands for it', () => {
    const built = buildPrompt({
      systemPrompt: 'sys',
      history: turns,
      userText: 'new',
      userAttachments: [photo],
      tokenBudget: 100_000,
      attachments: rules,
    });
    const oldCost = messageTokens(turns[0]!, { imageShown: false, textTokens: 1_000 });
    expect(oldCost).toBeLessThan(cost('old photo') + 100);
    expect(built.estimatedTokens).toBe(
      cost('sys') +
        oldCost +
        cost('a1') +
        cost('recent photo') +
        cost('a2') +
        cost('new') +
        2 * imageTokens(2000, 1500),
    );
  });

  it('drops the oldest turns when the images of the window do not fit', () => {
    const text = cost('sys') + cost('new') + cost('recent photo') + cost('a2');
    const built = buildPrompt({
      systemPrompt: 'sys',
      history: turns,
      userText: 'new',
      userAttachments: [photo],
      tokenBudget: text + 2 * imageTokens(2000, 1500),
      attachments: rules,
    });
    expect(built.includedMessages).toBe(2);
    expect(built.droppedMessages).toBe(2);
  });

  it('shows the images of the newest four user messages when the settings are not given', () => {
    const many = [1, 2, 3, 4].flatMap((n) => [withPhoto(`c${n}`, 'q'), assistant(`c${n}`, 'a')]);
    const built = buildPrompt({ systemPrompt: 's', history: many, userText: 'n', tokenBudget: 100_000 });
    const captioned = messageTokens(many[0]!, { imageShown: false, textTokens: 1 });
    const textOnly = cost('s') + cost('n') + 3 * (cost('q') + cost('a')) + cost('a');
    expect(built.estimatedTokens).toBe(textOnly + captioned + 3 * imageTokens(2000, 1500));
  });
});
