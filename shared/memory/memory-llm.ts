// The memory worker's model calls: the changes a turn makes to the user's profile, from the user's own words and the
// active facts only, and the conversation's summary (themes, persons, places, sentiment). Inputs are bounded, so a
// call's cost never grows with the conversation; the offline model answers these formats by name.
import { z } from 'zod';
import { completeInstructedJson } from '../llm/instructed-json.js';
import type { LlmGateway } from '../llm/llm-gateway.js';
import {
  MAX_FACT_CHARS,
  MAX_SUMMARY_LIST,
  profileCategorySchema,
  summaryContentSchema,
  type ProfileCategory,
  type SummaryContent,
} from './contracts.js';
import { cut } from '../plain-text.js';

/** Response format names: the offline model recognises them. */
export const PROFILE_CHANGES_FORMAT = 'memory_profile_changes';
export const CONVERSATION_SUMMARY_FORMAT = 'conversation_summary';

/** The user's words the profile call sees (the chat's own limit on a message, by default). */
export const PROFILE_TEXT_CHARS = 8_000;
/** Each of the question and the answer the summary call sees. */
export const SUMMARY_TEXT_CHARS = 4_000;
/** Changes of each kind one answer may propose: a turn says a handful of things about its user, not dozens. */
export const MAX_PROPOSED_CHANGES = 20;
export const MAX_EVIDENCE_CHARS = 500;
export const MAX_REASON_CHARS = 300;

const evidenceSchema = z.string().min(1).max(MAX_EVIDENCE_CHARS);
const reasonSchema = z.string().min(1).max(MAX_REASON_CHARS);
const statementSchema = z.string().min(1).max(MAX_FACT_CHARS);
const factIdSchema = z.string().min(1);

/** What the model proposes; profile-merge.ts decides what of it becomes a change. */
export const proposedProfileChangesSchema = z.object({
  add: z
    .array(
      z.object({ category: profileCategorySchema, statement: statementSchema, evidence: evidenceSchema }),
    )
    .max(MAX_PROPOSED_CHANGES),
  reaffirm: z.array(z.object({ factId: factIdSchema, evidence: evidenceSchema })).max(MAX_PROPOSED_CHANGES),
  replace: z
    .array(
      z.object({
        factId: factIdSchema,
        category: profileCategorySchema,
        statement: statementSchema,
        evidence: evidenceSchema,
        reason: reasonSchema,
      }),
    )
    .max(MAX_PROPOSED_CHANGES),
  retract: z
    .array(z.object({ factId: factIdSchema, evidence: evidenceSchema, reason: reasonSchema }))
    .max(MAX_PROPOSED_CHANGES),
});
export type ProposedProfileChanges = z.infer<typeof proposedProfileChangesSchema>;

/** An active fact as the profile call shows it. */
export interface FactInView {
  id: string;
  category: ProfileCategory;
  statement: string;
}

const PROFILE_INSTRUCTIONS = [
  "You keep a user's profile: facts about the user, each in one category. The user message is a JSON object with",
  '"userMessage" (what the user wrote in this turn, the only source you may use) and "activeFacts" (the profile',
  'now: factId, category, statement).',
  '',
  'Record only what the user says about themselves: their preferences, interests, knowledge, dislikes, family and',
  'friends, work, goals, how to address them, and how the assistant should answer and behave. Questions, tasks,',
  'hypotheticals and quoted text are not facts about the user. Categories: output_preferences (how answers should',
  'look: length, format, language), personal_preferences (how to address the user, their tastes and habits),',
  'assistant_preferences (how the assistant should be: tone, personality), knowledge (what the user knows or is',
  'skilled in), interests, dislikes, family_and_friends (people close to the user, with their names), work_profile',
  '(job, employer, role), goals.',
  '',
  'Answer with four lists:',
  '- "add": new facts: "category", "statement" (one sentence in the third person about "the user", e.g. "The user',
  '  prefers answers as bullet points."), "evidence";',
  '- "reaffirm": active facts the user states again: "factId", "evidence";',
  '- "replace": active facts the user contradicts with a new value: "factId", the new fact\'s "category" and',
  '  "statement", "evidence", "reason" (why the old fact no longer holds);',
  '- "retract": active facts the user contradicts with nothing to replace them ("I no longer ..."): "factId",',
  '  "evidence", "reason".',
  '"evidence" is the exact words of userMessage that state it, copied verbatim; a change without such evidence is',
  'discarded. Never add what an active fact already says (reaffirm it), never add the same fact twice, and never',
  'keep a contradicted fact beside the new one (replace or retract it). When the user says nothing about',
  'themselves, answer four empty lists.',
].join('\n');

const SUMMARY_INSTRUCTIONS = [
  'You keep the summary of one conversation between a user and an assistant, used later to find the conversation',
  'and recall what it was about. The user message is a JSON object with "previousSummary" (the summary so far, or',
  'null at the start) and "exchange" (the newest "userMessage" and "assistantAnswer").',
  '',
  'Write the summary of the whole conversation so far, in its language: "summary" (a few sentences: what the user',
  'wanted, the facts, names, numbers and decisions, and how it ended), "themes" (at most 12 short topics),',
  '"persons" (people named), "places" (places named), "user_sentiment" (the user\'s mood over the conversation:',
  'positive, neutral, negative or mixed). Keep what the previous summary holds unless the exchange changes it.',
].join('\n');

/**
 * The changes the turn's user message makes to the profile, as the model proposes them. Its input is the user's
 * words and the active facts only: never the system prompt, the assistant's words or tool output, so nothing but
 * the user can put a fact in their profile. Throws what the gateway throws (an LlmError).
 */
export async function proposeProfileChanges(
  llm: LlmGateway,
  input: { userText: string; activeFacts: readonly FactInView[] },
): Promise<ProposedProfileChanges> {
  const message = {
    userMessage: cut(input.userText, PROFILE_TEXT_CHARS),
    activeFacts: input.activeFacts.map((fact) => ({
      factId: fact.id,
      category: fact.category,
      statement: fact.statement,
    })),
  };
  return completeInstructedJson(llm, {
    instructions: PROFILE_INSTRUCTIONS,
    input: message,
    schema: proposedProfileChangesSchema,
    name: PROFILE_CHANGES_FORMAT,
  });
}

/**
 * The conversation's summary after one more exchange: the previous summary's fields and the exchange's words (the
 * answer's text, without tool calls or results). Throws what the gateway throws.
 */
export async function summariseConversation(
  llm: LlmGateway,
  input: { previous: SummaryContent | undefined; userText: string; answer: string },
): Promise<SummaryContent> {
  const message = {
    previousSummary: input.previous
      ? {
          summary: input.previous.summary,
          themes: input.previous.themes,
          persons: input.previous.persons,
          places: input.previous.places,
          user_sentiment: input.previous.user_sentiment,
        }
      : null,
    exchange: {
      userMessage: cut(input.userText, SUMMARY_TEXT_CHARS),
      assistantAnswer: cut(input.answer, SUMMARY_TEXT_CHARS),
    },
  };
  const value = await completeInstructedJson(llm, {
    instructions: SUMMARY_INSTRUCTIONS,
    input: message,
    schema: summaryContentSchema,
    name: CONVERSATION_SUMMARY_FORMAT,
  });
  return {
    summary: value.summary.trim(),
    themes: distinct(value.themes),
    persons: distinct(value.persons),
    places: distinct(value.places),
    user_sentiment: value.user_sentiment,
  };
}

/** Trimmed, blank entries left out, each once (case-insensitively, the first spelling kept). */
function distinct(items: readonly string[]): string[] {
  const seen = new Set<string>();
  const kept: string[] = [];
  for (const item of items) {
    const text = item.trim();
    const key = text.toLowerCase();
    if (text === '' || seen.has(key)) continue;
    seen.add(key);
    kept.push(text);
  }
  return kept.slice(0, MAX_SUMMARY_LIST);
}
