// The history worker under test: the in-memory history ports, a recording model that validates as the real gateway
// does, and a conversation started with one header; with the turn events the worker's tests persist.
import { beforeEach } from 'vitest';
import type { ConversationMessage } from '../../shared/conversation/messages.js';
import type { MessageCompleted } from '../../shared/conversation/message-completed.js';
import type { TurnBranch } from '../../shared/conversation/branches.js';
import type { ConversationHeader, SessionDigest, StoredMessage } from '../../shared/history/contracts.js';
import { SESSION_SUMMARY_FORMAT } from '../../shared/history/history-llm.js';
import type { HistoryWorkerServices } from '../../shared/history/persist-turn.js';
import {
  LlmError,
  type CompleteJsonRequest,
  type LlmGateway,
  type LlmReply,
} from '../../shared/llm/llm-gateway.js';
import {
  MemoryConversationHeaders,
  MemoryConversationMessages,
  MemorySessionMemory,
} from './in-memory-history.js';
import { MemorySessions } from './in-memory-ports.js';
import { completedExchange } from './message-completed.js';

export const userId = 'user_001';
export const sessionId = '0f8fad5b-d9cb-469f-a165-70867728950e';
export const at = '2026-11-22T10:00:00.000Z';

export type Answer = (name: string, input: Record<string, unknown>) => unknown;

/** A model that answers completeJson from the test's function and validates as the real gateway does. */
export class RecordingModel implements LlmGateway {
  readonly requests: CompleteJsonRequest<unknown>[] = [];
  constructor(public answer: Answer) {}
  completeJson<T>(request: CompleteJsonRequest<T>): Promise<T> {
    this.requests.push(request);
    const input = JSON.parse(request.messages.at(-1)?.content ?? '{}') as Record<string, unknown>;
    const parsed = request.schema.safeParse(this.answer(request.name, input));
    return parsed.success
      ? Promise.resolve(parsed.data)
      : Promise.reject(new LlmError(`unusable "${request.name}" JSON`, { retryable: true }));
  }
  inputs(name: string): Record<string, unknown>[] {
    return this.requests
      .filter((request) => request.name === name)
      .map((request) => JSON.parse(request.messages.at(-1)?.content ?? '{}') as Record<string, unknown>);
  }
  streamChat(): Promise<LlmReply> {
    return Promise.reject(new Error('not used'));
  }
  embed(): Promise<number[][]> {
    return Promise.reject(new Error('not used'));
  }
  probe() {
    return Promise.resolve({ ok: true, detail: 'recording model' });
  }
}

export const goodAnswer: Answer = (name, input) =>
  name === SESSION_SUMMARY_FORMAT
    ? {
        summary: [
          input['previousSummary'],
          ...(input['exchanges'] as { question: string }[]).map((e) => `asked ${e.question}`),
        ]
          .filter((part) => part !== '')
          .join('; '),
      }
    : 'firstQuestion' in input
      ? { line: lineFor(input), tags: ['Topic', 'topic'], title: 'Model title' }
      : { line: lineFor(input), tags: ['topic'] };
const lineFor = (input: Record<string, unknown>) => `line: ${String(input['question']).slice(0, 20)}`;

export class SilentLog {
  readonly lines: string[] = [];
  log = (...args: unknown[]) => void this.lines.push(args.join(' '));
  warn = (...args: unknown[]) => void this.lines.push(args.join(' '));
}

/** A fresh history worker's ports, services and log, and what a test reads back. */
export interface HistoryWorker {
  headers: MemoryConversationHeaders;
  messages: MemoryConversationMessages;
  memory: MemorySessionMemory;
  model: RecordingModel;
  sessions: MemorySessions;
  services: HistoryWorkerServices;
  log: SilentLog;
  /** Working memory's window. */
  hot: ConversationMessage[];
  /** Working memory's messages of other branches (offPath). */
  hotOffPath: ConversationMessage[];
  /** What the worker did, in order: each digest revision marked in working memory, each digest written. */
  digestSteps: string[];
}

/**
 * A history worker made anew before each test of the calling file, its conversation started; the object returned
 * is the same throughout, its fields replaced each time.
 */
export function useHistoryWorker(): HistoryWorker {
  const world = {} as HistoryWorker;
  beforeEach(async () => {
    const headers = new MemoryConversationHeaders();
    const messages = new MemoryConversationMessages();
    Object.assign(world, {
      headers,
      messages,
      memory: new MemorySessionMemory(messages),
      model: new RecordingModel(goodAnswer),
      sessions: new MemorySessions(),
      log: new SilentLog(),
      hot: [],
      hotOffPath: [],
      digestSteps: [],
    });
    const putDigest = world.memory.putDigest.bind(world.memory);
    world.memory.putDigest = (async (...args: Parameters<typeof putDigest>) => {
      const written = await putDigest(...args);
      if (written === 'written') world.digestSteps.push(`written ${String(args[2].revision)}`);
      return written;
    }) as typeof putDigest;
    world.services = {
      headers,
      messages,
      sessionMemory: world.memory,
      llm: world.model,
      workingMemory: {
        load: () =>
          Promise.resolve({
            userId,
            sessionId,
            messages: world.hot,
            offPath: world.hotOffPath,
            messageCount: world.hot.length,
          }),
        announceDigest: (_user, _session, revision) => {
          world.digestSteps.push(`marked ${revision}`);
          return Promise.resolve();
        },
      },
      sessions: world.sessions,
      settings: { promptTokenBudget: 4_000 },
      now: () => new Date(at),
    };
    await startConversation(world, 'What is the capital of France?');
  });
  return world;
}

export function startConversation(world: HistoryWorker, firstUserText: string) {
  return world.headers.touch({
    userId,
    sessionId,
    createdAt: at,
    lastActivity: at,
    messageCount: 2,
    preview: 'p',
    firstUserText,
  });
}

/** The header's next recordPersisted fails as Cosmos DB would when unavailable: the turn is then delivered again. */
export function failNextRecord(headers: MemoryConversationHeaders): void {
  const record = headers.recordPersisted.bind(headers);
  let failures = 1;
  headers.recordPersisted = ((...args: Parameters<typeof record>) =>
    failures-- > 0
      ? Promise.reject(new Error('Cosmos DB unavailable'))
      : record(...args)) as typeof headers.recordPersisted;
}

export const chatId = (n: number) => `7c9e6679-7425-40de-944b-${String(n).padStart(12, '0')}`;

/** Turn n: the user's message at ordinal 2n and the answer (with a tool call) at 2n + 1. */
export function turn(
  n: number,
  options: { question?: string; answer?: string; outcome?: 'completed' | 'failed'; branch?: TurnBranch } = {},
): MessageCompleted {
  return completedExchange({
    userId,
    sessionId,
    chatMessageId: chatId(n),
    ordinal: 2 * n,
    question: options.question ?? `question ${n}`,
    at,
    failed: options.outcome === 'failed',
    answer: {
      content: options.answer ?? `answer ${n}`,
      finishReason: 'stop',
      toolCalls: [
        { id: 'c1', name: 'add_numbers', arguments: '{"a":1}', result: '1', isError: false, round: 0 },
      ],
      usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 },
    },
    ...(options.branch === undefined ? {} : { branch: options.branch }),
  });
}

export const storedOf = (world: HistoryWorker): StoredMessage[] => [
  ...(world.messages.items.get(`${userId}\u0000${sessionId}`)?.values() ?? []),
];
export const headerOf = async (world: HistoryWorker): Promise<ConversationHeader> =>
  (await world.headers.get(userId, sessionId))!;
export const digestOf = async (world: HistoryWorker): Promise<SessionDigest | undefined> =>
  (await world.memory.getDigest(userId, sessionId))?.digest;
