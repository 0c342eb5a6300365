// The decisions of a tool call (runTool) and of a turn that could not be answered (failTurn), over what each step
// read: a call is run once and its result event sent on every run; a failed turn keeps what its client was shown. Pure.
import { isTerminalEvent, type ChatEvent } from '../../streaming/contracts.js';
import { answerText, shownSources } from '../../streaming/turn-transcript.js';
import { placeTurn, turnMessagesIn } from '../../conversation/active-path.js';
import { assistantMessageId, userMessageId } from '../../conversation/turn-ids.js';
import type { ConversationMessage } from '../../conversation/messages.js';
import type { WorkingMemory } from '../../conversation/working-memory-store.js';
import type { FailTurnInput, RunToolInput, RunToolOutput } from '../contracts/activities.js';
import type { ToolResultRecord } from '../contracts/documents.js';
import type { ToolCall } from '../../llm/llm-gateway.js';
import type { StoredTurn } from '../turn-state-store.js';
import { userMessage } from './turn-decision.js';
import type { Decision, Happening, TurnEffect, TurnEnd } from './turn-effects.js';
import { memoryFlag } from '../contracts/queue.js';
import { totalUsage } from './turn-usage.js';
import { MCP_SERVER_PREFIX, MCP_TOOL_PREFIX } from '../../mcp/tool-names.js';

/** The result of a tool call its turn was stopped before it ran. */
const NOT_RUN = {
  result: JSON.stringify({ error: 'Not run: the user stopped the answer before this tool ran.' }),
  isError: true,
};

/** What a tool call's step read. */
export interface ToolStep {
  input: RunToolInput;
  turn: StoredTurn | undefined;
  call: ToolCall;
  /** Its result, when an earlier attempt stored it. */
  done: ToolResultRecord | undefined;
  stopped: boolean;
  deleted: boolean;
  /** The call needs its user's yes, which it has not had yet: how long the turn waits for it. */
  awaitsApproval?: { timeoutSeconds: number } | undefined;
  result?: ToolResultRecord;
}

/** The id of the approval a tool call asks for: unique in its turn, the same on every run of the step. */
export function approvalIdOf(input: Pick<RunToolInput, 'round' | 'index'>): string {
  return `${input.round}-${input.index}`;
}

/** The decisions of one tool call: run once, its `tool-result` event the same however often the step runs. */
export function decideTool(step: ToolStep, happened: Happening): Decision<ToolStep, RunToolOutput> {
  const { input, call } = step;
  if (happened.kind === 'read') {
    // A deleted conversation's tool is not run, and nothing of it is stored.
    if (step.deleted) return { state: step, effects: [{ kind: 'deleted' }] };
    if (step.done) return toolResultSent({ ...step, result: step.done }, []);
    // A call of a stopped turn is not run, but it gets its result (and its event, whose seq is reserved).
    if (step.stopped) return toolRan(step, NOT_RUN);
    // A built-in tool the conversation's assistant does not name was not offered: the model made the call up.
    if (!offered(step.turn?.tools, call.name)) return toolRan(step, notOffered(call.name, step.turn?.tools));
    if (input.approval?.approved === false) return toolRan(step, denied(input.approval.reason));
    if (step.awaitsApproval) return approvalAsked(step);
    return {
      state: step,
      effects: [
        {
          kind: 'run-tool',
          call,
          branch: step.turn?.branch,
          documentIds: step.turn?.documentIds,
          tools: step.turn?.tools,
        },
      ],
    };
  }
  if (happened.kind === 'ran') return toolRan(step, happened.outcome);
  if (happened.kind === 'closed') {
    const output: RunToolOutput =
      step.result === undefined && step.awaitsApproval
        ? { isError: false, approval: { approvalId: approvalIdOf(input), ...step.awaitsApproval } }
        : { isError: step.result?.isError ?? true };
    return { state: step, effects: [{ kind: 'output', output }] };
  }
  throw new Error(`A tool call does not follow '${happened.kind}'.`);

  function toolRan(at: ToolStep, outcome: Extract<Happening, { kind: 'ran' }>['outcome']) {
    const result: ToolResultRecord = {
      round: input.round,
      index: input.index,
      toolCallId: call.id,
      name: call.name,
      arguments: call.arguments,
      ...outcome,
    };
    return toolResultSent({ ...at, result }, [{ kind: 'store-tool-result', result }]);
  }
}

/** The result a denied (or unanswered) call gets: the model reads why it did not run. */
/**
 * Whether the turn offered a tool of this name: any built-in one when its assistant names none, else those it names.
 * The user's MCP tools (`mcp__...`) are checked where they run, against the MCP servers the assistant names.
 */
export function offered(tools: readonly string[] | undefined, name: string): boolean {
  return tools === undefined || name.startsWith(MCP_TOOL_PREFIX) || tools.includes(name);
}

function notOffered(name: string, tools: readonly string[] | undefined) {
  const builtIn = (tools ?? []).filter((tool) => !tool.startsWith(MCP_SERVER_PREFIX));
  const available = builtIn.length === 0 ? 'none' : builtIn.join(', ');
  return {
    result: JSON.stringify({
      error: `Not run: tool "${name}" is not offered in this conversation. Available built-in tools: ${available}.`,
    }),
    isError: true,
  };
}

function denied(reason: string | undefined) {
  const why = reason === undefined || reason.trim() === '' ? '' : `: ${reason.trim()}`;
  return {
    result: JSON.stringify({ error: `The user denied this call${why}` }),
    isError: true,
    denied: true as const,
  };
}

/** The call waits for its user's yes: the request is stored and streamed (sent again, unchanged, on a rerun). */
function approvalAsked(step: ToolStep): Decision<ToolStep, RunToolOutput> {
  const { input, call } = step;
  return {
    state: step,
    effects: [
      {
        kind: 'emit',
        event: {
          type: 'tool-approval-request',
          round: input.round,
          approvalId: approvalIdOf(input),
          toolCallId: call.id,
          toolName: call.name,
          input: call.arguments,
        },
      },
      { kind: 'close' },
    ],
  };
}

function toolResultSent(
  step: ToolStep,
  before: TurnEffect<RunToolOutput>[],
): Decision<ToolStep, RunToolOutput> {
  const { result, input } = step;
  if (result === undefined) throw new Error('No tool result to send.');
  // The event is the same however often this runs, so storing it again is a no-op (and it is sent again).
  return {
    state: step,
    effects: [
      ...before,
      {
        kind: 'emit',
        event: {
          type: 'tool-result',
          round: input.round,
          toolCallId: result.toolCallId,
          name: result.name,
          result: result.result,
          isError: result.isError,
          ...(result.denied ? { denied: true as const } : {}),
          ...(result.connect === undefined ? {} : { connect: result.connect }),
        },
      },
      { kind: 'close' },
    ],
  };
}

/** What a failed turn's step read. */
export interface FailureStep {
  input: FailTurnInput;
  /** Working memory, or, with the hot store down, what the header knows of it (its count and path). */
  memory: WorkingMemory;
  /** Every stored event of the turn. */
  events: ChatEvent[];
  turn: StoredTurn | undefined;
  /** The hot store did not answer (the likely reason the turn failed). */
  hotStoreDown: boolean;
  deleted: boolean;
  /** The step's clock when it read (ISO). */
  at: string;
  end?: TurnEnd;
}

/**
 * The decisions of a failed turn: the user's message is kept with the failure, and so is what the client was shown
 * (the stream's kept content and its last sources) as the assistant's partial message; the stream ends with `error`.
 */
export function decideFailure(step: FailureStep, happened: Happening): Decision<FailureStep, undefined> {
  if (happened.kind === 'committed') return failureEnding({ ...step, memory: happened.memory });
  if (happened.kind === 'closed') {
    const effects: TurnEffect<undefined>[] = step.end ? [{ kind: 'log-end', end: step.end }] : [];
    effects.push(announced(step));
    return { state: step, effects };
  }
  if (happened.kind !== 'read') throw new Error(`A failed turn does not follow '${happened.kind}'.`);
  if (step.deleted) return { state: step, effects: [{ kind: 'deleted' }] };
  const { input, memory, turn, events } = step;
  // Sent again while the stream is open: the round's attempts may have died between storing and sending.
  const resend: TurnEffect<undefined>[] =
    events.length > 0 && !events.some(isTerminalEvent) ? [{ kind: 'resend', events }] : [];
  if (turnMessagesIn(memory, input.chatMessageId).length > 0) {
    const next = failureEnding(step);
    return { state: next.state, effects: [...resend, ...next.effects] };
  }
  const messages = failedMessages(step);
  if (step.hotStoreDown) {
    // Numbered after what the header counts and continuing the path it shows (an edit or a regenerate cannot find
    // the turn it replaces now), so the rebuilt conversation has them in their place; kept through the announcement.
    const placed = placeTurn(memory, messages, undefined, Number.POSITIVE_INFINITY);
    const next = failureEnding(
      placed.kind === 'placed' ? { ...step, memory: { ...memory, ...placed.state } } : step,
    );
    return { state: next.state, effects: [...resend, ...next.effects] };
  }
  // A prompt the model was sent stays the conversation's; the message stays where the turn began.
  const record = {
    ...(turn?.systemPrompt ? { systemPrompt: turn.systemPrompt } : {}),
    ...(turn?.branch ? { branch: turn.branch } : {}),
  };
  return {
    state: step,
    effects: [
      ...resend,
      {
        kind: 'commit',
        messages,
        memory,
        record,
        ...(turn?.branch ? {} : { placeFirst: { fork: input.fork } }),
      },
    ],
  };
}

/** The user's message with its failure, and what its client was shown (or only the sources it was shown). */
function failedMessages(step: FailureStep): ConversationMessage[] {
  const { input, events } = step;
  const messages: ConversationMessage[] = [
    { ...userMessage(input), ...memoryFlag(input), failure: input.failure },
  ];
  const shown = answerText(events);
  const sources = shownSources(events);
  if (shown !== '' || sources.length > 0)
    messages.push({
      messageId: assistantMessageId(input.chatMessageId),
      chatMessageId: input.chatMessageId,
      role: 'assistant',
      content: shown,
      timestamp: step.at,
      finishReason: 'error',
      ...(sources.length > 0 ? { sources } : {}),
      ...memoryFlag(input),
    });
  return messages;
}

/** Before the stream ends, as for an answer: the failed turn is in the list once the client sees its error. */
function failureEnding(step: FailureStep): Decision<FailureStep, undefined> {
  const { input, events, turn } = step;
  const effects: TurnEffect<undefined>[] = [
    { kind: 'touch-header', memory: step.memory },
    { kind: 'free-slot' },
  ];
  if (events.some(isTerminalEvent)) return { state: step, effects: [...effects, announced(step)] };
  if (events.length === 0)
    effects.push({
      kind: 'emit',
      event: {
        type: 'message-start',
        userMessageId: userMessageId(input.chatMessageId),
        assistantMessageId: assistantMessageId(input.chatMessageId),
      },
    });
  effects.push(
    { kind: 'emit', event: { type: 'error', code: input.failure.code, message: input.failure.message } },
    { kind: 'close' },
  );
  const end: TurnEnd = {
    finishReason: 'error',
    usage: totalUsage((turn?.rounds ?? []).map((round) => round.usage)),
    // The rounds that asked for tools, and the one that failed.
    rounds: (turn?.rounds.length ?? 0) + 1,
    postedAt: input.postedAt,
  };
  return { state: { ...step, end }, effects };
}

function announced(step: FailureStep): TurnEffect<undefined> {
  return { kind: 'announce', outcome: 'failed', completedAt: step.at, memory: step.memory };
}
