// The prompt of a model round: a new conversation's system prompt (personalised within the profile's budget), the
// digest when it stands for the turn's path, the history range chosen when the turn began, and earlier rounds.
import { digestStandsFor } from '../../history/digest.js';
import type { ChatMessage } from '../../llm/llm-gateway.js';
import { conversationSystemPrompt, fetchProfileWithin } from '../../memory/personalised-prompt.js';
import type { LlmStepInput } from '../contracts/activities.js';
import type { SystemPrompt } from '../../conversation/messages.js';
import { withInstructions } from '../../conversation/conversation-shape.js';
import { readScopes } from '../../conversation/memory-scope.js';
import type { ToolResultRecord, TurnRecord } from '../contracts/documents.js';
import type { TurnBranch } from '../../conversation/branches.js';
import { BASIC_SYSTEM_PROMPT, buildPrompt, historyInRange, type PromptDigest } from '../prompt.js';
import type { WorkingMemory } from '../../conversation/working-memory-store.js';
import { now, type TurnServices } from './turn-services.js';

/** What a round's prompt is built from, read at the start of the step. */
export interface PromptState {
  memory: WorkingMemory;
  /** The conversation's summary and exchange lines; undefined while there are none (or they could not be read). */
  digest: PromptDigest | undefined;
}

/**
 * The prompt of a round: the digest, the turn's history (by its range), the user's message, then earlier rounds'
 * traffic.
 */
export function promptOf(
  state: PromptState,
  record: TurnRecord,
  toolResults: readonly ToolResultRecord[],
): ChatMessage[] {
  const digest = digestOnPath(state.digest, record.branch);
  const prompt = buildPrompt({
    systemPrompt: systemPromptText(state.memory, record),
    history: historyInRange(state.memory.messages, record.history),
    ...(digest ? { digest } : {}),
    userText: record.userText,
    userAttachments: record.attachments,
    // The range was chosen to fit the budget when the turn began; the same messages are sent again.
    tokenBudget: Number.POSITIVE_INFINITY,
  });
  const messages = prompt.messages;
  // A given context goes between the system prompt and the user's message, as the client gave it.
  if (record.context !== undefined) messages.splice(messages.length - 1, 0, ...record.context);
  if (record.followUp !== undefined) messages.push(...record.followUp);
  for (const round of [...record.rounds].sort((a, b) => a.round - b.round)) {
    messages.push({
      role: 'assistant',
      content: round.content,
      ...(round.toolCalls.length > 0 ? { tool_calls: round.toolCalls } : {}),
    });
    for (const [index, call] of round.toolCalls.entries()) {
      const result = toolResults.find((r) => r.round === round.round && r.index === index);
      messages.push({
        role: 'tool',
        tool_call_id: call.id,
        content: result?.result ?? JSON.stringify({ error: 'The tool did not return a result.' }),
      });
    }
  }
  return messages;
}

/**
 * The system prompt a round sends: the one this turn rendered for its new conversation, else the conversation's
 * stored one, else (a conversation begun before prompts were kept) the basic one.
 */
export function systemPromptText(memory: WorkingMemory, record: Pick<TurnRecord, 'systemPrompt'>): string {
  return (record.systemPrompt ?? memory.systemPrompt)?.content ?? BASIC_SYSTEM_PROMPT;
}

/**
 * A new conversation's system prompt: personalised with the user's active facts, read within the budget (a slow
 * or failing profile costs the round at most the budget, and the basic prompt stands in); the basic one for a turn
 * posted with use_memory false. Undefined for a conversation that has begun: its prompt is the stored one, unless
 * the conversation was filed in another project (or in none) since that prompt was rendered: then the turn renders
 * the prompt with its project's instructions now, and the stored one stays what the first turn was told.
 */
export async function newConversationPrompt(
  services: Pick<TurnServices, 'profile' | 'settings' | 'log' | 'now' | 'instructions'>,
  input: LlmStepInput,
  memory: WorkingMemory,
): Promise<SystemPrompt | undefined> {
  const isNew =
    memory.messages.length === 0 && memory.messageCount === 0 && memory.systemPrompt === undefined;
  const refiled = memory.systemPrompt !== undefined && memory.systemPrompt.projectId !== input.projectId;
  if (!isNew && !refiled) return undefined;
  const shaped = input.assistant !== undefined || input.projectId !== undefined;
  const [facts, guidance] = await Promise.all([
    input.useMemory === false
      ? undefined
      : fetchProfileWithin(
          services.profile,
          input.userId,
          services.settings.profileTimeoutMs,
          services.log,
          // The user's shared memory, and its assistant's own and its project's: one query all the same.
          readScopes(input),
        ),
    // Read only for a conversation started with an assistant or in a project, once: the prompt is then kept.
    shaped && services.instructions ? services.instructions(input.userId, input) : undefined,
  ]);
  const prompt = conversationSystemPrompt(
    withInstructions(BASIC_SYSTEM_PROMPT, guidance?.instructions),
    facts,
    now(services),
  );
  return {
    ...prompt,
    ...(input.projectId === undefined ? {} : { projectId: input.projectId }),
    ...(guidance?.documentIds === undefined ? {} : { documentIds: guidance.documentIds }),
    ...(guidance?.tools === undefined ? {} : { tools: guidance.tools }),
  };
}

/**
 * The digest, when it stands for the turn's path: it summarises the messages below `summarizedThrough` of the path
 * it was folded along, so a turn whose path differs there (another branch) goes without it until history rebases
 * it. A turn begun before branches (no branch) takes it as it is.
 */
export function digestOnPath(
  digest: PromptDigest | undefined,
  branch: TurnBranch | undefined,
): PromptDigest | undefined {
  if (digest === undefined || branch === undefined) return digest;
  return digestStandsFor({ ...digest, gaps: digest.gaps ?? [] }, branch.gaps) ? digest : undefined;
}
