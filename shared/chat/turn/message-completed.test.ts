// The `message-completed` body: the turn's messages whole, or cut step by step until they fit a Service Bus message.
import { describe, expect, it } from 'vitest';
import { input, ref } from '../../../test/support/turn-fixture.js';
import type { KnowledgeSource } from '../../conversation/sources.js';
import {
  MESSAGE_COMPLETED_MAX_BYTES,
  messageCompletedSchema,
  type MessageCompleted,
} from '../../conversation/message-completed.js';
import type { ConversationMessage } from '../../conversation/messages.js';
import type { UsageScope, UsageWriter } from '../../usage/usage-scope.js';
import { currentUsageScope, withUsage } from '../../usage/usage-scope.js';
import { announce, completedBody } from './message-completed.js';

describe('completedBody', () => {
  const head = { ...ref, outcome: 'completed' as const, completedAt: '2026-11-21T10:00:05.000Z' };
  const source = (n: number, excerpt: string, title = 'Handbook'): KnowledgeSource => ({
    chunkId: `doc:${n}`,
    documentId: 'a'.repeat(32),
    title,
    citation: `${title}, p. ${n}`,
    excerpt,
    score: 0.01,
  });
  const answerWith = (sources: KnowledgeSource[], result = 'found'): ConversationMessage => ({
    messageId: `${input.chatMessageId}_assistant`,
    chatMessageId: input.chatMessageId,
    role: 'assistant',
    content: 'The answer.',
    timestamp: head.completedAt,
    toolCalls: [
      { id: 'c1', name: 'search_knowledge_base', arguments: '{}', result, isError: false, round: 0 },
    ],
    sources,
    ordinal: 1,
  });
  const size = (body: MessageCompleted) => Buffer.byteLength(JSON.stringify(body), 'utf8');
  const assistantOf = (body: MessageCompleted) => body.messages.find((m) => m.role === 'assistant');

  it('carries the messages whole when they fit', () => {
    const body = completedBody(head, [answerWith([source(1, 'Leave is paid.')])]);
    expect(body.complete).toBe(true);
    expect(assistantOf(body)?.sources).toEqual([source(1, 'Leave is paid.')]);
  });

  it('cuts the tool results first, and keeps the sources whole when that is enough', () => {
    const body = completedBody(head, [answerWith([source(1, 'Leave is paid.')], 'r'.repeat(300_000))]);
    expect(body.complete).toBe(false);
    expect(size(body)).toBeLessThanOrEqual(MESSAGE_COMPLETED_MAX_BYTES);
    expect(assistantOf(body)?.toolCalls?.[0]?.result).toHaveLength(1_000);
    expect(assistantOf(body)?.sources).toEqual([source(1, 'Leave is paid.')]);
  });

  it("then drops the sources' excerpts, then the sources, until the body fits a Service Bus message", () => {
    const long = Array.from({ length: 20 }, (_, n) => source(n, 'e'.repeat(12_000)));
    const withoutExcerpts = completedBody(head, [answerWith(long)]);
    expect(withoutExcerpts.complete).toBe(false);
    expect(size(withoutExcerpts)).toBeLessThanOrEqual(MESSAGE_COMPLETED_MAX_BYTES);
    expect(assistantOf(withoutExcerpts)?.sources).toEqual(long.map((s) => ({ ...s, excerpt: '' })));
    expect(() => messageCompletedSchema.parse(withoutExcerpts)).not.toThrow();

    const titled = Array.from({ length: 20 }, (_, n) => source(n, 'e', 't'.repeat(12_000)));
    const withoutSources = completedBody(head, [answerWith(titled)]);
    expect(size(withoutSources)).toBeLessThanOrEqual(MESSAGE_COMPLETED_MAX_BYTES);
    expect(assistantOf(withoutSources)).not.toHaveProperty('sources');
    expect(assistantOf(withoutSources)?.content).toBe('The answer.');
  });

  it("names the caller's groups, so the workers exempt whom the front door exempted", async () => {
    const published: unknown[] = [];
    const publisher = {
      publish: (_topic: string, message: { body: unknown }) => {
        published.push(message.body);
        return Promise.resolve();
      },
    };
    const user: ConversationMessage = {
      messageId: `${input.chatMessageId}_user`,
      chatMessageId: input.chatMessageId,
      role: 'user',
      content: 'Hello',
      timestamp: head.completedAt,
    };
    const stored = { messages: [{ ...user, ordinal: 0 }], offPath: [] };
    const services = { publisher } as unknown as Parameters<typeof announce>[0];
    await announce(services, { ...ref, groups: ['g-staff'] }, 'completed', head.completedAt, stored);
    await announce(services, ref, 'completed', head.completedAt, stored);
    expect(published.map((body) => (body as MessageCompleted).groups)).toEqual([['g-staff'], undefined]);
  });

  it("hands the step's model calls on with the announcement, once it is published, and then writes none itself", async () => {
    const stored = {
      messages: [
        {
          messageId: `${input.chatMessageId}_user`,
          chatMessageId: input.chatMessageId,
          role: 'user' as const,
          content: 'Hello',
          timestamp: head.completedAt,
          ordinal: 0,
        },
      ],
      offPath: [],
    };
    const usage = { promptTokens: 12, completionTokens: 3, totalTokens: 15 };
    const written: number[] = [];
    const writer: UsageWriter = {
      write: (scope: UsageScope) => {
        written.push(scope.calls.length);
        return Promise.resolve();
      },
    };
    const step = async (publish: (body: unknown) => Promise<void>, handOver: boolean) => {
      const services = { publisher: { publish: (_: string, m: { body: unknown }) => publish(m.body) } };
      await withUsage({ ...ref, turnId: ref.chatMessageId, job: 'round:0' }, async () => {
        currentUsageScope()!.tally(writer, { kind: 'turn', model: 'm', usage });
        await announce(
          services as unknown as Parameters<typeof announce>[0],
          ref,
          'completed',
          head.completedAt,
          stored,
          handOver,
        );
      });
    };
    const bodies: MessageCompleted[] = [];
    await step((body) => Promise.resolve(void bodies.push(body as MessageCompleted)), true);
    expect(bodies[0]?.usage).toEqual({ job: 'round:0', calls: [{ kind: 'turn', model: 'm', usage }] });
    expect(written).toEqual([]);
    // A turn that reserved spend records its own calls; an announcement that failed leaves them to the step.
    await step((body) => Promise.resolve(void bodies.push(body as MessageCompleted)), false);
    expect(bodies[1]).not.toHaveProperty('usage');
    await expect(step(() => Promise.reject(new Error('Service Bus is down')), true)).rejects.toThrow('down');
    expect(written).toEqual([1, 1]);
  });
});
