// Carries out what the turn's decisions return, in order, against the step's ports, and hands each effect's result
// back to the decision; the turn's log line and announcement wait until the step is known kept (its conversation stands).
import type { ChatEvent } from '../../streaming/contracts.js';
import type { TurnStream } from '../../streaming/turn-stream.js';
import { spendLimited } from '../../quota/quota-gate.js';
import { groupsFlag, memoryFlag, shapeFlags } from '../contracts/queue.js';
import type { AssistantRef } from '../../conversation/conversation-shape.js';
import { readScopes } from '../../conversation/memory-scope.js';
import type { TurnRef } from '../../conversation/messages.js';
import type { WorkingMemory } from '../../conversation/working-memory-store.js';
import { headerTouch } from '../header-touch.js';
import { announce } from './message-completed.js';
import { openStream, serversFlag, streamRound } from './round-stream.js';
import { DELETED, unlessDeleted } from './step-guards.js';
import type { Decision, Happening, TurnEffect } from './turn-effects.js';
import { freeQuotaSlot, logTurnEnd } from './turn-end.js';
import { commitMessages, failedTurnPlace, showParentPath } from './turn-place.js';
import { newTurnRecord } from './turn-record.js';
import type { GuardServices } from './step-guards.js';
import { now, type StreamPorts, type TurnServices } from './turn-services.js';

export { DELETED };

/** What the model round runs on (every port: it may prepare, stream, record, commit and end the turn). */
export type TurnPorts = TurnServices;

/**
 * What the runner is given: every step's guard and stream, and the ports its activity names; an effect that needs a
 * port the step was not given fails at once, naming it.
 */
type RunnerPorts = GuardServices &
  StreamPorts &
  Partial<Omit<TurnServices, 'headers' | 'cancellation'>> & {
    headers: GuardServices['headers'] & Partial<TurnServices['headers']>;
    cancellation: GuardServices['cancellation'] & Partial<TurnServices['cancellation']>;
  };

/** What every step's input names: its turn, its memory mode, its model, whether it holds a quota slot, its groups. */
export type StepRef = TurnRef & {
  useMemory?: boolean | undefined;
  memoryMode?: 'read' | undefined;
  model?: string | undefined;
  temporary?: boolean | undefined;
  projectId?: string | undefined;
  /** The conversation's assistant (a step that announces the turn tells where its memory is kept). */
  assistant?: AssistantRef | undefined;
  quotaSlot?: boolean | undefined;
  groups?: readonly string[] | undefined;
};

/** What a step read: the state its decisions start from, the seq its stream starts at, a send it began already. */
export interface StepStart<S> {
  state: S;
  firstSeq: number;
  sent?: Promise<void> | undefined;
}

/**
 * Runs one step: reads, then decides and carries out effects until a decision leads nowhere further. The whole runs
 * under the delete guard; what must follow only a kept step (log line, announcement) runs after it.
 */
export async function runTurnStep<S, O>(
  services: RunnerPorts,
  ref: StepRef,
  read: () => Promise<StepStart<S>>,
  decide: (state: S, happened: Happening) => Decision<S, O>,
): Promise<O | undefined | typeof DELETED> {
  const kept: TurnEffect<O>[] = [];
  const result = await unlessDeleted(services, ref, async () => {
    const start = await read();
    const run = new EffectRun(services, ref, start.firstSeq, start.sent);
    let state = start.state;
    let happened: Happening | undefined = { kind: 'read' };
    let output: O | undefined;
    while (happened !== undefined) {
      const decision = decide(state, happened);
      state = decision.state;
      happened = undefined;
      for (const group of together(decision.effects)) {
        const [effect] = group;
        if (effect === undefined) continue;
        if (effect.kind === 'deleted') return DELETED;
        if (effect.kind === 'output') output = effect.output;
        else if (effect.kind === 'log-end' || effect.kind === 'announce') kept.push(effect);
        else if (group.length > 1) await Promise.all(group.map((each) => run.perform(each)));
        // Events emitted in one run travel together (the text still held goes out with the stream's end).
        else if (run.emits(effect)) continue;
        else happened = await run.perform(effect);
      }
    }
    await run.finish();
    return { output };
  });
  if (result === DELETED) return DELETED;
  for (const effect of kept) {
    if (effect.kind === 'log-end') logTurnEnd(services, ref, effect.end);
    else if (effect.kind === 'announce')
      await announce(
        need(services, effect.kind, 'publisher'),
        ref,
        effect.outcome,
        effect.completedAt,
        effect.memory,
        // A turn that reserved tokens or spend keeps its reservation until its own record is written: it records it.
        services.quota === undefined || !spendLimited(services.quota.config),
      );
  }
  return result.output;
}

/**
 * A project's documents as they are when knowledge search runs (its two point reads only then): a document added to
 * the project after the conversation began is searched, one taken out is not. Without a project, the documents the
 * conversation's assistant named at its version stand, as its prompt recorded them.
 */
function currentDocuments(
  services: RunnerPorts,
  ref: StepRef,
): { currentDocumentIds?: () => Promise<string[] | undefined> } {
  const { instructions } = services;
  if (ref.projectId === undefined || instructions === undefined) return {};
  return {
    currentDocumentIds: async () => (await instructions(ref.userId, shapeFlags(ref))).documentIds,
  };
}

/** Effects that may run at once (they touch different stores and none waits for another): the rest one by one. */
const CONCURRENT = new Set<TurnEffect<unknown>['kind']>(['touch-header', 'settle', 'free-slot']);

function together<O>(effects: readonly TurnEffect<O>[]): TurnEffect<O>[][] {
  const groups: TurnEffect<O>[][] = [];
  for (const effect of effects) {
    const last = groups.at(-1);
    const joins = last?.[0] !== undefined && CONCURRENT.has(last[0].kind) && CONCURRENT.has(effect.kind);
    if (last && joins) last.push(effect);
    else groups.push([effect]);
  }
  return groups;
}

/** One step's run of effects: its stream (opened at the first event) and the live sends before it. */
class EffectRun {
  #stream: TurnStream | undefined;
  #sending: Promise<void> | undefined;

  constructor(
    private readonly services: RunnerPorts,
    private readonly ref: StepRef,
    private readonly firstSeq: number,
    sent: Promise<void> | undefined,
  ) {
    this.#sending = sent;
  }

  get stream(): TurnStream {
    this.#stream ??= openStream(this.services, this.ref, this.firstSeq, this.#sending);
    return this.#stream;
  }

  /** Carries out an effect on the stream at once, with no wait: whether it was one. */
  emits<O>(effect: TurnEffect<O>): boolean {
    if (effect.kind === 'resend') this.#resend(effect.events);
    else if (effect.kind === 'emit') this.stream.emit(effect.event);
    else if (effect.kind === 'emit-end') {
      const { finishReason, usage, model } = effect;
      const cost = usage && this.services.pricing ? this.services.pricing(usage, model) : undefined;
      this.stream.emit({
        type: 'message-end',
        finishReason,
        ...(usage ? { usage } : {}),
        ...(cost ? { cost } : {}),
      });
    } else return false;
    return true;
  }

  /** Carries out one effect; answers what happened when the decision needs to know. */
  async perform<O>(effect: TurnEffect<O>): Promise<Happening | undefined> {
    const { services, ref } = this;
    switch (effect.kind) {
      case 'settle':
        await this.#stream?.settle();
        return undefined;
      case 'close':
        await this.stream.close();
        return { kind: 'closed', nextSeq: this.stream.nextSeq };
      case 'begin-turn': {
        const state = { memory: effect.memory, digest: effect.digest };
        const record = await newTurnRecord(
          need(services, effect.kind, 'workingMemory', 'profile'),
          effect.input,
          state,
        );
        return { kind: 'prepared', record, memory: state.memory };
      }
      case 'show-path': {
        const memory = await showParentPath(
          need(services, effect.kind, 'workingMemory'),
          ref,
          effect.parentChatMessageId,
          effect.memory,
        );
        return { kind: 'prepared', record: effect.record, memory };
      }
      case 'call-model': {
        const model = need(services, effect.kind, 'llm', 'tools', 'cancellation');
        const reply = await streamRound(model, ref, this.stream, effect);
        return { kind: 'replied', reply, at: now(services) };
      }
      case 'record-round': {
        const { turns } = need(services, effect.kind, 'turns');
        return { kind: 'recorded', round: await turns.addRound(effect.record, effect.round) };
      }
      case 'run-tool': {
        const { tools, userTools } = need(services, effect.kind, 'tools');
        if (userTools?.owns(effect.call.name) === true)
          return {
            kind: 'ran',
            outcome: await userTools.execute(effect.call, {
              userId: ref.userId,
              ...groupsFlag(ref),
              ...serversFlag(effect.tools),
            }),
          };
        const outcome = await tools.execute(effect.call, {
          userId: ref.userId,
          sessionId: ref.sessionId,
          chatMessageId: ref.chatMessageId,
          ...memoryFlag(ref),
          memoryScopes: readScopes(ref),
          // The past-answer tools answer from the turn's own path, never from other branches.
          ...(effect.branch ? { branch: effect.branch } : {}),
          // Knowledge search reads only the documents the conversation's assistant and project name.
          ...(effect.documentIds ? { documentIds: effect.documentIds } : {}),
          ...currentDocuments(services, ref),
        });
        return { kind: 'ran', outcome };
      }
      case 'store-tool-result':
        await need(services, effect.kind, 'turns').turns.putToolResult(ref, effect.result);
        return undefined;
      case 'commit': {
        const place = need(services, effect.kind, 'workingMemory');
        let { memory, record } = effect;
        if (effect.placeFirst) {
          const placed = await failedTurnPlace(place, ref, effect.placeFirst.fork, memory);
          memory = placed.memory;
          record = { ...record, ...(placed.branch ? { branch: placed.branch } : {}) };
        }
        return {
          kind: 'committed',
          memory: await commitMessages(place, ref, effect.messages, memory, record),
        };
      }
      case 'touch-header':
        // A temporary chat has no header: it is in no list or search, and history keeps nothing of it.
        if (ref.temporary !== true)
          await touchHeader(need(services, effect.kind, 'headers'), ref, effect.memory);
        return undefined;
      case 'free-slot':
        await freeQuotaSlot(services, ref);
        return undefined;
      case 'resend':
      case 'emit':
      case 'emit-end':
      case 'output':
      case 'log-end':
      case 'announce':
      case 'deleted':
        throw new Error(`The effect '${effect.kind}' is not carried out here.`);
    }
  }

  /** Every emitted event stored and every live send done before the step returns. */
  async finish(): Promise<void> {
    if (this.#stream) await this.#stream.close();
    else await this.#sending;
  }

  /** Live delivery of events already stored, before any later send; a failure is logged (clients read the log). */
  #resend(events: ChatEvent[]): void {
    const { services, ref } = this;
    const after = this.#sending ?? Promise.resolve();
    this.#sending = after.then(() =>
      services.sink
        .send({ userId: ref.userId, sessionId: ref.sessionId }, events)
        .catch((error: unknown) =>
          services.log?.warn(`Live delivery of turn ${ref.chatMessageId} failed:`, error),
        ),
    );
  }
}

/** Keeps the conversation's header live after a commit, from working memory as the commit left it. */
async function touchHeader(
  services: Pick<TurnServices, 'headers'>,
  ref: StepRef,
  memory: WorkingMemory,
): Promise<void> {
  const touch = headerTouch(ref, memory);
  // A conversation started in a project has its header filed there when the header is made.
  if (touch !== undefined)
    await services.headers.touch(
      ref.projectId === undefined ? touch : { ...touch, projectId: ref.projectId },
    );
}

/** The step's ports, with those an effect needs checked present. */
function need<K extends keyof TurnServices>(
  services: RunnerPorts,
  effect: string,
  ...ports: K[]
): RunnerPorts & Pick<TurnServices, K> {
  // The guard's ports are every step's; an effect may need more of them (the header's touch, the stop's watch).
  const given = (port: K) =>
    port === 'headers'
      ? services.headers.touch !== undefined
      : port === 'cancellation'
        ? services.cancellation.watch !== undefined
        : services[port] !== undefined;
  const missing = ports.find((port) => !given(port));
  if (missing !== undefined)
    throw new Error(`The effect '${effect}' needs the port '${missing}', which this step was not given.`);
  return services as RunnerPorts & Pick<TurnServices, K>;
}
