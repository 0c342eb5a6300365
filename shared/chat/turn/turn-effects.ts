// What the turn's decisions speak of: the effects a step carries out (store and send events, call the model or a
// tool, commit, free the slot, announce) and what happens as they run, which the next decision reads.
import type { ChatMessage, LlmReply, LlmUsage, ToolCall, ToolSpec } from '../../llm/llm-gateway.js';
import type { ChatEvent, ChatEventBody, ToolConnectNeed } from '../../streaming/contracts.js';
import type { ConversationMessage } from '../../conversation/messages.js';
import type { TurnBranch, TurnFork } from '../../conversation/branches.js';
import type { WorkingMemory } from '../../conversation/working-memory-store.js';
import type { LlmStepInput } from '../contracts/activities.js';
import type { RoundRecord, ToolResultRecord, TurnRecord } from '../contracts/documents.js';
import type { PromptDigest } from '../prompt.js';

/** A model call's reply, with how long the model reasoned before it answered (measured as it streamed). */
export type RoundReply = LlmReply & { reasoningMs?: number };

/** How a turn ended, as its one log line tells it. */
export interface TurnEnd {
  finishReason: string;
  usage: LlmUsage | undefined;
  /** Model rounds the turn took (1 without tools). */
  rounds: number;
  postedAt: string;
}

/** What a step carries out, in the order given; the ones marked with a result lead to the next decision. */
export type TurnEffect<O> =
  /** Sends live again what an earlier attempt stored (it may have died before sending it); clients keep each seq once. */
  | { kind: 'resend'; events: ChatEvent[] }
  /** Stores, then sends, the stream's next event (text deltas are coalesced). */
  | { kind: 'emit'; event: ChatEventBody }
  /** The stream's end: its usage priced for the model that answered (the configured one when unknown). */
  | { kind: 'emit-end'; finishReason: string; usage: LlmUsage | undefined; model: string | undefined }
  /** Waits until what was emitted is stored and sent, the text still held by the coalescer aside. */
  | { kind: 'settle' }
  /** Stores and sends everything emitted. Result: `closed`. */
  | { kind: 'close' }
  /** Places a new turn in the conversation's tree and makes its record. Result: `prepared`. */
  | { kind: 'begin-turn'; input: LlmStepInput; memory: WorkingMemory; digest: PromptDigest | undefined }
  /** Moves working memory back to the turn's path (the user switched branches meanwhile). Result: `prepared`. */
  | { kind: 'show-path'; record: TurnRecord; parentChatMessageId: string; memory: WorkingMemory }
  /** Streams one model call into the stream (watching for a stop). Result: `replied`. */
  | {
      kind: 'call-model';
      messages: ChatMessage[];
      toolsAllowed: boolean;
      watchFrom: number | undefined;
      /** The built-in tools the conversation's assistant names; absent: all of them. */
      tools?: readonly string[] | undefined;
      /** The client's own tools, offered after the turn's. */
      clientTools?: readonly ToolSpec[] | undefined;
    }
  /** Adds a round that asked for tools to the turn's record. Result: `recorded`. */
  | { kind: 'record-round'; record: TurnRecord; round: RoundRecord }
  /** Runs one tool call. Result: `ran`. */
  | {
      kind: 'run-tool';
      call: ToolCall;
      branch: TurnBranch | undefined;
      documentIds?: readonly string[] | undefined;
      /** The tools the conversation's assistant names (its MCP servers among them); absent: all of them. */
      tools?: readonly string[] | undefined;
    }
  | { kind: 'store-tool-result'; result: ToolResultRecord }
  /**
   * Writes the turn's messages on the record's branch. Result: `committed`.
   */
  | {
      kind: 'commit';
      messages: ConversationMessage[];
      memory: WorkingMemory;
      record: Pick<TurnRecord, 'systemPrompt' | 'branch'>;
      /** The turn never took its branch (it failed in round 0): it is decided first, as round 0 decides it. */
      placeFirst?: { fork: TurnFork | undefined };
    }
  | { kind: 'touch-header'; memory: WorkingMemory }
  | { kind: 'free-slot' }
  /** What the step returns. */
  | { kind: 'output'; output: O }
  /** Once the step is known kept (its conversation stands after its writes): the turn's one log line. */
  | { kind: 'log-end'; end: TurnEnd }
  /** Once the step is known kept: `message-completed`, with the turn's messages as `memory` holds them. */
  | { kind: 'announce'; outcome: 'completed' | 'failed'; completedAt: string; memory: WorkingMemory }
  /** The conversation was deleted: nothing of the turn is kept. */
  | { kind: 'deleted' };

/** What just happened: the step's reads, or the result of an effect. */
export type Happening =
  | { kind: 'read' }
  | { kind: 'prepared'; record: TurnRecord; memory: WorkingMemory }
  | { kind: 'replied'; reply: RoundReply; at: string }
  | { kind: 'closed'; nextSeq: number }
  | { kind: 'recorded'; round: RoundRecord }
  | { kind: 'committed'; memory: WorkingMemory }
  | { kind: 'ran'; outcome: { result: string; isError: boolean; connect?: ToolConnectNeed } };

export interface Decision<S, O> {
  state: S;
  effects: TurnEffect<O>[];
}
