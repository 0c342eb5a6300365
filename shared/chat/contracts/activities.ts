// The chatTurn orchestration's contracts: its name, its activities' names, and the inputs and outputs each passes
// (ids and small deltas, never transcripts, so orchestration history stays small).
import { messageAttachmentSchema } from '../../message-attachments.js';
import { z } from 'zod';
import { turnForkSchema } from '../../conversation/branches.js';
import { turnFailureSchema, turnRefSchema } from '../../conversation/messages.js';
import { turnTelemetrySchema } from '../../telemetry/contracts.js';
import { modelIdSchema, projectIdSchema } from '../../ids.js';
import { assistantRefSchema } from '../../conversation/conversation-shape.js';
import {
  callerGroupsSchema,
  clientToolsSchema,
  queuedChatMessageSchema,
  turnContextSchema,
} from './queue.js';

/** Finish reason of a turn its owner stopped: the text generated until then is its answer. */
export const CANCELLED_FINISH_REASON = 'cancelled';

export const CHAT_TURN_ORCHESTRATION = 'chatTurn';

export const TURN_ACTIVITIES = {
  llmStep: 'llmStep',
  runTool: 'runTool',
  fail: 'failTurn',
  park: 'parkTurn',
  resume: 'resumeTurn',
} as const;

/** Finish reason when the model still wanted tools after maxToolRounds rounds. */
export const TOOL_ROUNDS_EXHAUSTED = 'tool_rounds_exhausted';

/**
 * One model round. Round 0 also prepares the turn (it gets the user's message); the round whose model answers
 * without tools also commits the turn.
 */
export const llmStepInputSchema = turnRefSchema.extend({
  round: z.number().int().nonnegative(),
  firstSeq: z.number().int().positive(),
  /** False once maxToolRounds rounds of tools ran: the model is asked for a text answer. */
  toolsAllowed: z.boolean(),
  /** Round 0 only. */
  message: z
    .object({
      text: z.string(),
      postedAt: z.string(),
      fork: turnForkSchema.optional(),
      attachments: z.array(messageAttachmentSchema).optional(),
      /** The messages the client gave before this one (the OpenAI-compatible API): the turn's history. */
      context: turnContextSchema.optional(),
      followUp: turnContextSchema.optional(),
      clientTools: clientToolsSchema.optional(),
    })
    .optional(),
  /** False: no profile in the prompt, no memory tools (use_memory false). Absent means true. */
  useMemory: z.boolean().optional(),
  /** `read`: memory is read, nothing is learned from the turn. */
  memoryMode: z.literal('read').optional(),
  /** The catalogue's model each round calls. Absent: the default. */
  model: modelIdSchema.optional(),
  /** Round 0 of a conversation's first turn renders their instructions into its system prompt. */
  assistant: assistantRefSchema.optional(),
  projectId: projectIdSchema.optional(),
  /** A temporary chat's turn: its commit gives the conversation no header (in no list, search or history). */
  temporary: z.literal(true).optional(),
  /** The turn holds a QUOTA_CONCURRENT_TURNS slot: the step that ends it frees the slot. */
  quotaSlot: z.literal(true).optional(),
  /** The caller's groups: which of the operator's MCP servers the round offers. */
  groups: callerGroupsSchema.optional(),
  telemetry: turnTelemetrySchema.optional(),
});
export type LlmStepInput = z.infer<typeof llmStepInputSchema>;

export const llmStepOutputSchema = z.object({
  /**
   * `answered`: the turn is committed and its stream ended; `tools`: run toolCalls, then the next round; `deleted`:
   * the conversation was deleted, nothing of the turn is kept, and the turn ends.
   */
  outcome: z.enum(['answered', 'tools', 'deleted']),
  nextSeq: z.number().int().positive(),
  /** Tool calls to run (their arguments are in the turn record); empty when the model answered. */
  toolCalls: z.array(z.object({ index: z.number().int().nonnegative(), name: z.string() })),
  finishReason: z.string(),
});
export type LlmStepOutput = z.infer<typeof llmStepOutputSchema>;

/** The orchestration's input. */
export const chatTurnInputSchema = queuedChatMessageSchema.extend({
  maxToolRounds: z.number().int().nonnegative(),
  /** The worker's trace context, passed on to every activity (absent when telemetry is off). */
  telemetry: turnTelemetrySchema.optional(),
  /**
   * Round 0 as the chat worker ran it (CHAT_FIRST_ROUND=worker), always with outcome `tools`: the orchestration
   * starts at that round's tool calls. Absent: the orchestration runs round 0 itself.
   */
  firstRound: llmStepOutputSchema.extend({ outcome: z.literal('tools') }).optional(),
});
export type ChatTurnInput = z.infer<typeof chatTurnInputSchema>;

/** The user's answer to a tool call that waited for their yes, as the orchestration receives it. */
export const approvalAnswerSchema = z.object({
  approved: z.boolean(),
  reason: z.string().max(1000).optional(),
  /** With approved: "always allow this tool", remembered for the user and its server (listed and revocable there). */
  always: z.boolean().optional(),
});
export type ApprovalAnswer = z.infer<typeof approvalAnswerSchema>;

/** The external event that carries the answer to one approval of a turn. */
export function approvalEventName(approvalId: string): string {
  return `approval:${approvalId}`;
}

export const runToolInputSchema = turnRefSchema.extend({
  round: z.number().int().nonnegative(),
  index: z.number().int().nonnegative(),
  seq: z.number().int().positive(),
  /** False: memory tools refuse (use_memory false). Absent means true. */
  useMemory: z.boolean().optional(),
  /** The conversation's assistant and project: the memory scopes its memory tools read. */
  assistant: assistantRefSchema.optional(),
  projectId: projectIdSchema.optional(),
  /** The caller's groups: which of the operator's MCP servers' tools the call may reach. */
  groups: callerGroupsSchema.optional(),
  /** The user's answer to a call that waited for their yes (a denial, or a timeout, becomes its result). */
  approval: approvalAnswerSchema.optional(),
  telemetry: turnTelemetrySchema.optional(),
});
export type RunToolInput = z.infer<typeof runToolInputSchema>;

/** A call that needs its user's yes was not run: it asked for it, and the orchestration waits for the answer. */
export const runToolOutputSchema = z.object({
  isError: z.boolean(),
  approval: z.object({ approvalId: z.string(), timeoutSeconds: z.number().int().positive() }).optional(),
});
export type RunToolOutput = z.infer<typeof runToolOutputSchema>;

/**
 * parkTurn (before a wait for the user's yes) and resumeTurn (after it): the turn gives its quota slot back while it
 * waits, and takes one again before it goes on.
 */
export const parkTurnInputSchema = turnRefSchema.extend({
  quotaSlot: z.literal(true).optional(),
  telemetry: turnTelemetrySchema.optional(),
});
export type ParkTurnInput = z.infer<typeof parkTurnInputSchema>;

/** Why a wait for the user's yes was denied when a later message of the session came. */
export const MOVED_ON_REASON = 'the user moved on (sent another message)';

/** parkTurn's answer: `movedOn` when a later message of the session was posted first (the wait is denied at once). */
export const parkTurnOutputSchema = z.object({ movedOn: z.literal(true).optional() });
export type ParkTurnOutput = z.infer<typeof parkTurnOutputSchema>;

/** resumeTurn's answer: no slot was free, ask again after `retryAfterSeconds`; absent, the turn holds its slot. */
export const resumeTurnOutputSchema = z.object({ retryAfterSeconds: z.number().int().positive().optional() });
export type ResumeTurnOutput = z.infer<typeof resumeTurnOutputSchema>;

/** The orchestration's custom status while it waits for its user's yes: the chat worker lets its session go. */
export const AWAITING_APPROVAL = 'awaiting-approval';

/** The turn could not be answered: keep the user's message and what was shown, and end the stream with `error`. */
export const failTurnInputSchema = turnRefSchema.extend({
  userText: z.string(),
  postedAt: z.string(),
  failure: turnFailureSchema,
  useMemory: z.boolean().optional(),
  memoryMode: z.literal('read').optional(),
  temporary: z.literal(true).optional(),
  /** The turn's fork (an edit or a regenerate): its failed message is kept on the branch it began. */
  fork: turnForkSchema.optional(),
  /** The turn holds a QUOTA_CONCURRENT_TURNS slot, which its failure frees. */
  quotaSlot: z.literal(true).optional(),
  telemetry: turnTelemetrySchema.optional(),
});
export type FailTurnInput = z.infer<typeof failTurnInputSchema>;

/** A temporary chat's expiry job: it sleeps until the chat's time is up, then deletes it everywhere. */
export const TEMPORARY_CHAT_EXPIRY_ORCHESTRATION = 'temporaryChatExpiry';
export const EXPIRE_TEMPORARY_CHAT_ACTIVITY = 'expireTemporaryChat';

export const temporaryChatExpiryInputSchema = z.object({
  userId: z.string(),
  sessionId: z.string(),
  expiresAt: z.iso.datetime(),
});
export type TemporaryChatExpiryInput = z.infer<typeof temporaryChatExpiryInputSchema>;

/** One job per temporary chat: starting it again for the same session is refused, not run twice. */
export function temporaryChatInstanceId(sessionId: string): string {
  return `temporary-chat-${sessionId}`;
}
