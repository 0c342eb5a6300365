// Deleting a conversation while its turn or its history job runs, over in-memory ports, landing at exact points: mid-stream,
// before the first token, while a tool runs, at the commit, at the header's touch, while the message is posted, and
// about the history job's last write. Nothing of it is left, nor after the steps and the workers run again.
import { beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/support/in-memory-ports.js';
import { SteppedModel, type ScriptedRound } from '../../test/support/stepped-model.js';
import {
  MESSAGE_COMPLETED_TOPIC,
  messageCompletedSchema,
  type MessageCompleted,
} from '../conversation/message-completed.js';
import type { LlmStepInput } from '../chat/contracts/activities.js';
import type { TurnRef } from '../conversation/messages.js';
import { postChatMessage, type PostChatMessageServices } from '../chat/post-chat-message.js';
import { llmStep } from '../chat/turn/llm-step.js';
import { runTool } from '../chat/turn/run-tool.js';
import type { TurnServices } from '../chat/turn/turn-services.js';
import { NotFoundError } from '../errors.js';
import type { LlmGateway, ToolCall } from '../llm/llm-gateway.js';
import { consolidateTurn } from '../memory/consolidate-turn.js';
import { deleteConversation } from './delete-conversation.js';
import { persistTurn, type HistoryWorkerServices } from './persist-turn.js';

const USER = 'user_001';
const CHAT_ID = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
const POSTED_AT = '2026-11-21T10:00:00.000Z';
const ADD: ToolCall = { id: 'call_1', name: 'add_numbers', arguments: '{"a":2,"b":3}' };
const silent = { log: () => undefined, warn: () => undefined };

const answerOnly: ScriptedRound[] = [{ content: 'Noted: you love chess, and I will keep it in mind.' }];
const withTool: ScriptedRound[] = [
  { content: 'Let me add them.', toolCalls: [ADD] },
  { content: 'It is 5.' },
];

let app: TestApp;
let ref: TurnRef;

beforeEach(async () => {
  app = createTestApp();
  const session = await app.fakes.sessions.create(USER);
  ref = { userId: USER, sessionId: session.sessionId, chatMessageId: CHAT_ID };
});

function remove() {
  return deleteConversation(
    {
      ...app.history,
      memory: app.memory,
      orchestrations: app.fakes.orchestrations,
      stops: app.chat.cancellations,
    },
    USER,
    ref.sessionId,
  );
}

async function post(services: Partial<PostChatMessageServices> = {}) {
  return postChatMessage(
    {
      sessions: app.chat.sessions,
      posted: app.chat.posted,
      publisher: app.chat.publisher,
      workingMemory: app.chat.turn.workingMemory,
      ticketTtlSeconds: 60,
      ...services,
    },
    { userId: USER, identityProvider: 'dev' },
    { sessionId: ref.sessionId, chatMessageId: CHAT_ID, text: 'I love chess.', useMemory: true },
  );
}

/** Runs the turn as the chatTurn orchestration does; returns how it ended. */
async function runTurn(services: TurnServices): Promise<string> {
  let seq = 1;
  for (let round = 0; ; round++) {
    const input: LlmStepInput = {
      ...ref,
      round,
      firstSeq: seq,
      toolsAllowed: true,
      ...(round === 0 ? { message: { text: 'I love chess.', postedAt: POSTED_AT } } : {}),
    };
    const step = await llmStep(services, input);
    if (step.outcome !== 'tools') return step.outcome;
    seq = step.nextSeq;
    const first = seq;
    seq += step.toolCalls.length;
    for (const [position, call] of step.toolCalls.entries())
      await runTool(services, { ...ref, round, index: call.index, seq: first + position });
  }
}

/** Everything the conversation could have left in any store; all empty once it is deleted. */
async function leftOf() {
  const { fakes } = app;
  const ofSession = <T extends { sessionId: string }>(values: Iterable<T>) =>
    [...values].filter((value) => value.sessionId === ref.sessionId);
  return {
    header: await fakes.headers.get(USER, ref.sessionId),
    workingMemory: fakes.workingMemory.messages,
    events: ofSession(fakes.events.stored.values()),
    turns: ofSession(fakes.turns.turns.values()),
    toolResults: [...fakes.turns.results.keys()],
    tickets: [...fakes.tickets.grants.keys()].filter((key) => key.startsWith(ref.sessionId)),
    posted: ofSession(fakes.posted.records.values()),
    history: [...fakes.longTermMessages.items.keys()].filter((key) => key.includes(ref.sessionId)),
    summary: await fakes.summaries.get(USER, ref.sessionId),
    facts: (await fakes.facts.list(USER)).filter((fact) =>
      fact.provenance.some((source) => source.sessionId === ref.sessionId),
    ),
    live: await fakes.sessions.find(USER, ref.sessionId),
  };
}

const NOTHING = {
  header: undefined,
  workingMemory: [],
  events: [],
  turns: [],
  toolResults: [],
  tickets: [],
  posted: [],
  history: [],
  summary: undefined,
  facts: [],
  live: undefined,
};

/** What was announced is delivered (again) to both workers, and the turn's round 0 runs again (a retry). */
async function redeliver(services: TurnServices): Promise<void> {
  for (const published of app.fakes.publisher.published.filter((p) => p.entity === MESSAGE_COMPLETED_TOPIC)) {
    const event = messageCompletedSchema.parse(published.message.body);
    await persistTurn(app.history.worker, event, silent);
    await consolidateTurn(app.memory.worker, event, silent);
  }
  const again = await llmStep(services, {
    ...ref,
    round: 0,
    firstSeq: 1,
    toolsAllowed: true,
    message: { text: 'I love chess.', postedAt: POSTED_AT },
  });
  expect(again.outcome).toBe('deleted');
}

async function expectDeletedForGood(services: TurnServices): Promise<void> {
  expect(await leftOf()).toEqual(NOTHING);
  expect(await app.fakes.sessions.isDeleted(USER, ref.sessionId)).toBe(true);
  await redeliver(services);
  expect(await leftOf()).toEqual(NOTHING);
}

function turnServices(model: SteppedModel, overrides: Partial<TurnServices> = {}): TurnServices {
  return { ...app.chat.turn, llm: model as unknown as LlmGateway, ...overrides };
}

describe('a conversation deleted while its turn runs', () => {
  it('mid-stream: the model stream is aborted at once and nothing of the turn is kept', async () => {
    await post();
    const model = new SteppedModel(answerOnly, async (_call, index) => {
      if (index === 3) await remove();
    });
    const services = turnServices(model);
    expect(await runTurn(services)).toBe('deleted');
    expect(app.chat.cancellations.stats().stoppedHere).toBe(1);
    expect(app.fakes.publisher.published.filter((p) => p.entity === MESSAGE_COMPLETED_TOPIC)).toEqual([]);
    await expectDeletedForGood(services);
  });

  it('before the first token', async () => {
    await post();
    const model = new SteppedModel(answerOnly, async (_call, index) => {
      if (index === 0) await remove();
    });
    const services = turnServices(model);
    expect(await runTurn(services)).toBe('deleted');
    await expectDeletedForGood(services);
  });

  it('while a tool runs: its result and event are taken back, and no later round runs', async () => {
    await post();
    const model = new SteppedModel(withTool);
    const tools = app.chat.turn.tools;
    const slowTools = {
      specs: tools.specs.bind(tools),
      execute: async (...args: Parameters<typeof tools.execute>) => {
        await remove();
        return tools.execute(...args);
      },
    } as unknown as typeof tools;
    const services = turnServices(model, { tools: slowTools });
    expect(await runTurn(services)).toBe('deleted');
    expect(model.requests).toHaveLength(1);
    await expectDeletedForGood(turnServices(model));
  });

  it('at the commit: the answer written just after the delete is erased again', async () => {
    await post();
    const model = new SteppedModel(answerOnly);
    const memory = app.chat.turn.workingMemory;
    const append = async (...args: Parameters<typeof memory.append>) => {
      await remove();
      return memory.append(...args);
    };
    // Working memory as it is, but for a delete that lands just before the commit's write.
    const lateMemory = new Proxy(memory, {
      get: (target, property) => {
        if (property === 'append') return append;
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const services = turnServices(model, { workingMemory: lateMemory });
    expect(await runTurn(services)).toBe('deleted');
    expect(app.fakes.publisher.published.filter((p) => p.entity === MESSAGE_COMPLETED_TOPIC)).toEqual([]);
    await expectDeletedForGood(turnServices(model));
  });

  it("at the header's touch: the header it would bring back is removed again", async () => {
    await post();
    const model = new SteppedModel(answerOnly);
    const headers = app.chat.turn.headers;
    const lines: string[] = [];
    const services = turnServices(model, {
      headers: {
        touch: async (touch) => {
          await remove();
          return headers.touch(touch);
        },
        delete: (userId, sessionId) => headers.delete(userId, sessionId),
        get: (userId, sessionId) => headers.get(userId, sessionId),
      },
      log: {
        log: (...args: unknown[]) => void lines.push(args.map(String).join(' ')),
        warn: () => undefined,
      },
    });
    expect(await runTurn(services)).toBe('deleted');
    // The stream had ended, but the turn was not kept: no line tells of an answer that is gone.
    expect(lines).toEqual([]);
    await expectDeletedForGood(turnServices(model));
  });

  it('while the message is being posted: 404, and its records are taken back', async () => {
    const posted = app.chat.posted;
    await expect(
      post({
        posted: {
          claim: async (message) => {
            await remove().catch(() => undefined);
            return posted.claim(message);
          },
          find: (...args) => posted.find(...args),
        },
      }),
    ).rejects.toBeInstanceOf(NotFoundError);
    expect(await leftOf()).toEqual(NOTHING);
  });

  it('a delete of a conversation deleted already is 404 and changes nothing', async () => {
    await post();
    expect(await runTurn(turnServices(new SteppedModel(answerOnly)))).toBe('answered');
    await remove();
    await expect(remove()).rejects.toBeInstanceOf(NotFoundError);
    expect(await app.fakes.sessions.isDeleted(USER, ref.sessionId)).toBe(true);
    expect(await leftOf()).toEqual(NOTHING);
  });
});

describe("a conversation deleted while the history worker stores its turn: the header's record is its last check", () => {
  type Recorded = Awaited<ReturnType<HistoryWorkerServices['headers']['recordPersisted']>>;

  /** The turn answered and announced: its `message-completed` event, as the history worker receives it. */
  async function announcedTurn(): Promise<MessageCompleted> {
    await post();
    expect(await runTurn(turnServices(new SteppedModel(answerOnly)))).toBe('answered');
    const published = app.fakes.publisher.published.find((p) => p.entity === MESSAGE_COMPLETED_TOPIC);
    return messageCompletedSchema.parse(published?.message.body);
  }

  /** The history worker with `around` run about its last write (the header's record); its tombstone reads counted. */
  function worker(around: (record: () => Promise<Recorded>) => Promise<Recorded>) {
    const { worker } = app.history;
    const reads = { tombstone: 0 };
    const headers = new Proxy(worker.headers, {
      get: (target, property) => {
        if (property === 'recordPersisted')
          return (...args: Parameters<typeof target.recordPersisted>) =>
            around(() => target.recordPersisted(...args));
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const sessions = {
      isDeleted: (userId: string, sessionId: string) => {
        reads.tombstone += 1;
        return worker.sessions.isDeleted(userId, sessionId);
      },
    };
    return { services: { ...worker, headers, sessions }, reads };
  }

  /** The delete's first steps only: the session's mark, then the header's (the rest of it runs later). */
  async function marks(): Promise<void> {
    await app.fakes.sessions.markDeleting(USER, ref.sessionId);
    await app.history.headers.markDeleting(USER, ref.sessionId);
  }

  /** The roles of the conversation's messages in long-term history, oldest first. */
  const storedRoles = () =>
    [...app.fakes.longTermMessages.items.values()]
      .flatMap((conversation) => [...conversation.values()])
      .filter((message) => message.sessionId === ref.sessionId)
      .sort((a, b) => a.ordinal - b.ordinal)
      .map((message) => message.role);

  it('not deleted: the turn is stored and recorded, and no tombstone is read', async () => {
    const event = await announcedTurn();
    const { services, reads } = worker((record) => record());
    expect(await persistTurn(services, event, silent)).toBe('persisted');
    expect(storedRoles()).toEqual(['user', 'assistant']);
    expect(await app.fakes.headers.get(USER, ref.sessionId)).toMatchObject({ persistedCount: 2 });
    expect(reads.tombstone).toBe(0);
  });

  it('deleted between its writes and its record: the record finds no header, and the job takes its writes back', async () => {
    const event = await announcedTurn();
    const { services } = worker(async (record) => {
      await remove();
      return record();
    });
    expect(await persistTurn(services, event, silent)).toBe('conversation-deleted');
    expect(await leftOf()).toEqual(NOTHING);
  });

  it('marked before its record and purged after: the record meets the mark, and nothing is left', async () => {
    const event = await announcedTurn();
    const { services, reads } = worker(async (record) => {
      await marks();
      const recorded = await record();
      await remove();
      return recorded;
    });
    expect(await persistTurn(services, event, silent)).toBe('conversation-deleted');
    expect(reads.tombstone).toBe(1);
    expect(await leftOf()).toEqual(NOTHING);
  });

  it("marked just after its record: the record lands, and the delete's purge takes the turn", async () => {
    const event = await announcedTurn();
    const { services, reads } = worker(async (record) => {
      const recorded = await record();
      await remove();
      return recorded;
    });
    expect(await persistTurn(services, event, silent)).toBe('persisted');
    expect(reads.tombstone).toBe(0);
    expect(await leftOf()).toEqual(NOTHING);
  });

  it('a header made again by a late touch after the delete is not taken for the one read: all of it goes', async () => {
    const event = await announcedTurn();
    const { services, reads } = worker(async (record) => {
      await remove();
      await app.history.headers.touch({
        userId: USER,
        sessionId: ref.sessionId,
        createdAt: POSTED_AT,
        lastActivity: POSTED_AT,
        messageCount: 2,
        preview: 'Noted',
        firstUserText: 'I love chess.',
      });
      return record();
    });
    expect(await persistTurn(services, event, silent)).toBe('conversation-deleted');
    expect(reads.tombstone).toBe(1);
    expect(await leftOf()).toEqual(NOTHING);
  });
});
