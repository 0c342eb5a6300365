// "Safe to run again at any point", checked: a process that dies before or after any write of a turn's steps (or
// in the model's stream), then retried as Durable retries, ends as a run without a crash: the same conversation, one
// gap-free log with one end that every live client has, the same usage, one announcement, the quota slot free.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MemoryQuotaState } from '../../../test/support/in-memory-quota.js';
import { input, ref, TurnFixture } from '../../../test/support/turn-fixture.js';
import type { LlmDelta, LlmGateway, LlmReply, StreamChatRequest } from '../../llm/llm-gateway.js';
import { quotaConfig, quotaSettings } from '../../quota/settings.js';
import { turnKey } from '../../quota/quota-state.js';
import { readSettings, SettingProblems, settingsOf } from '../../settings/setting.js';
import { isTerminalEvent, type ChatEvent } from '../../streaming/contracts.js';
import { answerText } from '../../streaming/turn-transcript.js';
import type { ChatTurnInput } from '../contracts/activities.js';
import { llmStepInputOf } from './chat-turn-orchestration.js';
import { failTurn } from './fail-turn.js';
import { llmStep } from './llm-step.js';
import { runTool } from './run-tool.js';
import type { TurnServices } from './turn-services.js';

const usage = (n: number) => ({ promptTokens: 10 * n, completionTokens: n, totalTokens: 11 * n });
const call = (id: string, a: number, b: number) => ({
  id,
  name: 'add_numbers',
  arguments: JSON.stringify({ a, b }),
});

/** A reply whose stream breaks after its text (the model's connection drops): every time it is asked. */
const BROKEN = 'broken';

/** What the model answers in each round of a turn (a round's reply is the same however often it is asked). */
const SCRIPTS: Record<string, LlmReply[]> = {
  answer: [
    {
      content: 'Five, as 2 and 3 make.',
      reasoning: 'Add.',
      toolCalls: [],
      finishReason: 'stop',
      usage: usage(1),
    },
  ],
  'one tool round': [
    {
      content: 'Let me add.',
      reasoning: '',
      toolCalls: [call('c1', 2, 3)],
      finishReason: 'tool_calls',
      usage: usage(2),
    },
    { content: 'The sum is 5.', reasoning: 'Read it.', toolCalls: [], finishReason: 'stop', usage: usage(3) },
  ],
  'two calls, then another round': [
    {
      content: '',
      reasoning: 'Both at once.',
      toolCalls: [call('c1', 1, 2), call('c2', 3, 4)],
      finishReason: 'tool_calls',
      usage: usage(4),
    },
    {
      content: 'And now the total.',
      reasoning: '',
      toolCalls: [call('c3', 3, 7)],
      finishReason: 'tool_calls',
    },
    { content: 'It is 10 in all.', reasoning: '', toolCalls: [], finishReason: 'stop', usage: usage(5) },
  ],
  'a tool round, then the model breaks': [
    {
      content: 'Adding.',
      reasoning: '',
      toolCalls: [call('c1', 2, 3)],
      finishReason: 'tool_calls',
      usage: usage(2),
    },
    { content: 'The sum is', reasoning: '', toolCalls: [], finishReason: BROKEN },
  ],
};

/** The process died: everything it does from then on fails, and what it finished is never reported. */
class Died extends Error {}

/** Where the process dies: at the k-th write (before or after it), or in the model's stream of a round. */
type CrashPoint =
  | { at: 'write'; k: number; after: boolean }
  | { at: 'model'; call: number; afterDeltas: number }
  | { at: 'nowhere' };

/** The turn's ports over a fixture, dying once at the crash point, and dead until the retry begins. */
class Mortal {
  writes = 0;
  modelCalls = 0;
  dead = false;
  died = false;
  fired = false;
  /** The process died once the stream's end was stored, before it was sent. */
  diedBeforeEndSent = false;

  constructor(
    readonly crash: CrashPoint,
    private readonly endUnsent: () => boolean,
  ) {}

  /** A write of the step: counted, and where the crash falls, done (after) or not (before), then the death. */
  async write<T>(work: () => Promise<T>): Promise<T> {
    this.alive();
    const k = this.writes++;
    const crash = this.crash;
    if (crash.at !== 'write' || crash.k !== k || this.fired) return work();
    this.fired = true;
    if (crash.after) await work();
    this.diedBeforeEndSent = this.endUnsent();
    this.die();
  }

  /** A read of the step: refused, as a promise that fails, once the process is dead. */
  async read<T>(work: () => Promise<T>): Promise<T> {
    this.alive();
    return work();
  }

  alive(): void {
    if (this.dead) throw new Died('the process is dead');
  }

  die(): never {
    this.dead = true;
    this.died = true;
    throw new Died('the process died');
  }
}

const WRITES = {
  events: ['append'],
  sink: ['send'],
  turns: ['addRound', 'putToolResult'],
  workingMemory: ['append', 'showPath'],
  headers: ['touch', 'delete'],
  publisher: ['publish'],
} as const;

/** Every port method through the mortal process: writes counted, everything refused once it is dead. */
function mortalPorts(t: TurnFixture, mortal: Mortal, quota: MemoryQuotaState): TurnServices {
  const services = t.services();
  const wrap = <P extends object>(port: P, writes: readonly string[]): P =>
    new Proxy(port, {
      get(target, name, receiver) {
        const value: unknown = Reflect.get(target, name, receiver);
        if (typeof value !== 'function') return value;
        const method = value as (...args: unknown[]) => unknown;
        return (...args: unknown[]) =>
          writes.includes(String(name))
            ? mortal.write(() => Promise.resolve(method.apply(target, args)))
            : mortal.read(() => Promise.resolve(method.apply(target, args)));
      },
    });
  const config = quotaConfig(
    readSettings(
      quotaSettings,
      { QUOTA_CONCURRENT_TURNS: '1' },
      new SettingProblems(settingsOf(quotaSettings)),
    ),
  );
  return {
    ...services,
    events: wrap(services.events, WRITES.events),
    sink: wrap(services.sink, WRITES.sink),
    turns: wrap(services.turns, WRITES.turns),
    workingMemory: wrap(services.workingMemory, WRITES.workingMemory),
    headers: wrap(services.headers, WRITES.headers),
    publisher: wrap(services.publisher, WRITES.publisher),
    sessions: wrap(services.sessions, []),
    quota: { config, state: wrap(quota, ['releaseTurnSlot']) },
    llm: mortalModel(mortal),
    log: { warn: () => undefined, log: () => undefined },
  };
}

/** The script's model: the reply of the round the prompt has reached, word by word; it may die midway. */
function mortalModel(mortal: Mortal): LlmGateway {
  const model: Pick<LlmGateway, 'streamChat'> = {
    streamChat(request: StreamChatRequest, onDelta?: (delta: LlmDelta) => void): Promise<LlmReply> {
      mortal.alive();
      const script = SCRIPTS[currentScript]!;
      const round = request.messages.filter((m) => m.role === 'assistant' && 'tool_calls' in m).length;
      const reply = script[round];
      if (reply === undefined) return Promise.reject(new Error(`no reply scripted for round ${round}`));
      const callIndex = mortal.modelCalls++;
      const deltas: LlmDelta[] = [
        ...(reply.reasoning ? [{ type: 'reasoning' as const, text: reply.reasoning }] : []),
        ...reply.content
          .split(/(?= )/)
          .filter(Boolean)
          .map((text) => ({ type: 'content' as const, text })),
      ];
      const crash = mortal.fired ? undefined : mortal.crash;
      for (const [index, delta] of deltas.entries()) {
        if (crash?.at === 'model' && crash.call === callIndex && crash.afterDeltas === index) {
          mortal.fired = true;
          mortal.die();
        }
        onDelta?.(delta);
      }
      if (reply.finishReason === BROKEN) return Promise.reject(new Error('the model stream broke'));
      return Promise.resolve(reply);
    },
  };
  return model as LlmGateway;
}

let currentScript = 'answer';

const turnInput: ChatTurnInput = { ...input, maxToolRounds: 5, quotaSlot: true };

/**
 * A step as an activity under Durable: run again while its process died in it (a death is never reported), and
 * after a failure, up to the retry policy's three attempts.
 */
async function activity<T>(mortal: Mortal, step: () => Promise<T>): Promise<T> {
  for (let failures = 0; ;) {
    mortal.dead = false;
    mortal.died = false;
    try {
      const result = await step();
      if (!mortal.died) return result;
    } catch (error) {
      if (!mortal.died && ++failures === 3) throw error;
    }
  }
}

/** The chatTurn orchestration's loop, each activity retried as Durable retries it; failTurn when one gives up. */
async function runTurn(services: TurnServices, mortal: Mortal): Promise<void> {
  try {
    await runRounds(services, mortal);
  } catch {
    const failure = { code: 'llm_unavailable', message: 'The model did not answer.' };
    await activity(mortal, () =>
      failTurn(services, {
        ...ref,
        userText: input.text,
        postedAt: input.postedAt,
        failure,
        quotaSlot: true,
      }),
    );
  }
}

async function runRounds(services: TurnServices, mortal: Mortal): Promise<void> {
  let seq = 1;
  for (let round = 0; ; round++) {
    const step = await activity(mortal, () =>
      llmStep(services, llmStepInputOf(turnInput, { round, firstSeq: seq, toolRounds: round })),
    );
    seq = step.nextSeq;
    if (step.outcome !== 'tools') return;
    const first = seq;
    seq += step.toolCalls.length;
    for (const [position, toolCall] of step.toolCalls.entries())
      await activity(mortal, () =>
        runTool(services, { ...ref, round, index: toolCall.index, seq: first + position }),
      );
  }
}

interface Outcome {
  conversation: unknown;
  events: ChatEvent[];
  sent: ChatEvent[];
  announced: unknown[];
  header: unknown;
  running: string[];
  writes: number;
  modelCalls: number;
  diedBeforeEndSent: boolean;
}

async function play(script: string, crash: CrashPoint): Promise<Outcome> {
  currentScript = script;
  const t = new TurnFixture();
  const quota = new MemoryQuotaState();
  const now = new Date('2026-11-21T10:00:01.000Z');
  await quota.takeTurnSlot({ userId: ref.userId, turn: turnKey(ref), max: 1, leaseSeconds: 900, now });
  const mortal = new Mortal(
    crash,
    () => t.storedEvents().some(isTerminalEvent) && !t.events.sent.some(isTerminalEvent),
  );
  await runTurn(mortalPorts(t, mortal, quota), mortal);
  return {
    conversation: structuredClone(t.memory.messages),
    events: t.storedEvents(),
    sent: [...t.events.sent],
    // Everything a turn's steps publish is its `message-completed`.
    announced: structuredClone(t.published),
    header: structuredClone(await t.headers.get(ref.userId, ref.sessionId)),
    running: quota.running(ref.userId, now),
    writes: mortal.writes,
    modelCalls: mortal.modelCalls,
    diedBeforeEndSent: mortal.diedBeforeEndSent,
  };
}

/** What a live client keeps of what it was sent: each seq once, as it first arrived. */
function firstArrivals(sent: readonly ChatEvent[]): ChatEvent[] {
  const seen = new Set<number>();
  return sent.filter((event) => !seen.has(event.seq) && seen.add(event.seq));
}

function expectSameTurn(crashed: Outcome, clean: Outcome): void {
  // The same conversation, header and free slot.
  expect(crashed.conversation).toEqual(clean.conversation);
  expect(crashed.header).toEqual(clean.header);
  expect(crashed.running).toEqual([]);
  // One event log, no gap, no duplicate, one end, last; it shows the committed answer.
  const { events } = crashed;
  expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index + 1));
  expect(events.filter(isTerminalEvent)).toHaveLength(1);
  expect(events.at(-1)?.type).toBe(clean.events.at(-1)?.type);
  expect(isTerminalEvent(events.at(-1) ?? { type: 'content' })).toBe(true);
  expect(answerText(events)).toBe(answerText(clean.events));
  // The same usage, each round's counted once, in the stream's end as in the committed answer (compared above).
  const end = events.at(-1);
  const cleanEnd = clean.events.at(-1);
  const usageOf = (event: ChatEvent | undefined) => (event?.type === 'message-end' ? event.usage : undefined);
  if (cleanEnd?.type === 'message-end') expect(usageOf(cleanEnd)).toBeDefined();
  expect(usageOf(end)).toEqual(usageOf(cleanEnd));
  // Every live client has the whole log: each copy sent is the stored event, and nothing is missing. Only when the
  // process died once the stream's end was stored, before it was sent, the step run again finds the stream ended
  // and sends nothing: the client has a beginning of the log, and reads the rest from it.
  for (const event of crashed.sent) expect(event).toEqual(events[event.seq - 1]);
  const live = firstArrivals(crashed.sent);
  if (crashed.diedBeforeEndSent) expect(live).toEqual(events.slice(0, live.length));
  else expect(live).toEqual(events);
  // Announced once (a repeat has the same message id and body, which the broker drops).
  expect(new Set(crashed.announced.map((message) => JSON.stringify(message)))).toEqual(
    new Set(clean.announced.map((message) => JSON.stringify(message))),
  );
  expect(clean.announced).toHaveLength(1);
}

describe('a turn whose process dies at any point, then is retried', () => {
  for (const script of Object.keys(SCRIPTS))
    it(`ends as it would have without the crash (${script})`, async () => {
      const clean = await play(script, { at: 'nowhere' });
      // Without a crash, everything stored is sent once, in order; a failing round's retries send again what the
      // attempts before stored.
      if (SCRIPTS[script]!.every((reply) => reply.finishReason !== BROKEN))
        expect(clean.sent).toEqual(clean.events);
      else expect(firstArrivals(clean.sent)).toEqual(clean.events);
      const points = fc.oneof(
        fc.record({
          at: fc.constant('write' as const),
          k: fc.integer({ min: 0, max: clean.writes - 1 }),
          after: fc.boolean(),
        }),
        fc.record({
          at: fc.constant('model' as const),
          call: fc.integer({ min: 0, max: clean.modelCalls - 1 }),
          afterDeltas: fc.integer({ min: 0, max: 4 }),
        }),
      );
      await fc.assert(
        fc.asyncProperty(points, async (crash) => expectSameTurn(await play(script, crash), clean)),
        { numRuns: 120 },
      );
    });

  it('dies at every write in turn, before and after it, and always ends the same', async () => {
    const clean = await play('one tool round', { at: 'nowhere' });
    for (let k = 0; k < clean.writes; k++)
      for (const after of [false, true])
        expectSameTurn(await play('one tool round', { at: 'write', k, after }), clean);
  });
});
