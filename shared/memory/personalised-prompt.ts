// The personalised system prompt of a new conversation: a template holding the base prompt, the user's profile by
// category under human headings and how to recall earlier conversations. Rendering is pure; fetchProfileWithin
// reads the active facts within the 2 s budget, and the turn goes on without them when they are slow or fail.
import type { SystemPrompt } from '../conversation/messages.js';
import type { Logger } from '../logger.js';
import {
  PROFILE_CATEGORIES,
  SEARCH_CONVERSATION_HISTORY_TOOL,
  type ProfileCategory,
  type ProfileFact,
} from './contracts.js';
import type { ProfileFacts } from './profile-facts.js';
import { oneLine } from '../plain-text.js';
import { inScopes, USER_SCOPE, type MemoryScope } from '../conversation/memory-scope.js';

/** The heading each category gets in the prompt (the profile's attributes, said for the model). */
export const PROFILE_HEADINGS: Readonly<Record<ProfileCategory, string>> = {
  output_preferences: 'How they like answers (length, detail, format)',
  personal_preferences: 'How to address them, and the tone they like',
  assistant_preferences: 'How they want the assistant to be (persona, communication style)',
  knowledge: 'What they know well',
  interests: 'Their interests',
  dislikes: 'What they dislike',
  family_and_friends: 'Family and friends they mentioned',
  work_profile: 'Their work',
  goals: 'Their goals',
};

/**
 * The most characters of fact statements a prompt carries. The system prompt always stays in the prompt (only
 * history is trimmed to the budget), so the profile is bounded: about 2,000 tokens of the default 16,000.
 */
export const MAX_PROFILE_PROMPT_CHARS = 6_000;

/** The template: `{{base}}` is the basic prompt, `{{profile}}` the facts under their headings. */
export const PERSONALISED_PROMPT_TEMPLATE = [
  '{{base}}',
  '',
  'What you know about this user from earlier conversations (they told you themselves). Use it to tailor your ' +
    'answers to their preferences, interests, knowledge and communication style. Do not recite it unasked, and ' +
    'when they now say something different, follow what they say now.',
  '',
  '{{profile}}',
  '',
  `You can recall earlier conversations with this user: when they refer to one ("last time", "as we discussed") ` +
    `or earlier context would help, call ${SEARCH_CONVERSATION_HISTORY_TOOL} with what to look for, and name the ` +
    'conversation you use (its title and date).',
].join('\n');

/** What rendering needs of a fact. */
export type PromptFact = Pick<ProfileFact, 'category' | 'statement' | 'validFrom'>;

/**
 * The system prompt a new conversation starts with: the template rendered with the facts, or, when there are none
 * (a new user, or the profile did not answer), the base prompt as it is.
 */
export function conversationSystemPrompt(
  base: string,
  facts: readonly PromptFact[] | undefined,
  createdAt: string,
): SystemPrompt {
  const profile = renderProfile(facts ?? []);
  if (profile === '') return { content: base, personalised: false, createdAt };
  return { content: renderTemplate({ base, profile }), personalised: true, createdAt };
}

/**
 * The facts under their headings, in the order of PROFILE_CATEGORIES. When they would pass
 * MAX_PROFILE_PROMPT_CHARS, the newest are kept (what the user said last is likelier to hold). Empty when there is
 * nothing to say.
 */
export function renderProfile(facts: readonly PromptFact[], maxChars = MAX_PROFILE_PROMPT_CHARS): string {
  const kept = new Set<PromptFact>();
  let chars = 0;
  const newestFirst = [...facts].sort((a, b) => b.validFrom.localeCompare(a.validFrom));
  for (const fact of newestFirst) {
    const length = oneLine(fact.statement).length;
    if (length === 0 || chars + length > maxChars) continue;
    kept.add(fact);
    chars += length;
  }
  const sections: string[] = [];
  for (const category of PROFILE_CATEGORIES) {
    const lines = facts
      .filter((fact) => fact.category === category && kept.has(fact))
      .map((fact) => `- ${oneLine(fact.statement)}`);
    if (lines.length > 0) sections.push([`## ${PROFILE_HEADINGS[category]}`, ...lines].join('\n'));
  }
  return sections.join('\n\n');
}

/** One pass over the template, so a placeholder inside a fact's text is left as written. */
function renderTemplate(values: { base: string; profile: string }): string {
  return PERSONALISED_PROMPT_TEMPLATE.replace(
    /\{\{(base|profile)\}\}/g,
    (_match, name: 'base' | 'profile') => values[name],
  );
}

/**
 * The user's active facts, or undefined when the profile did not answer within `budgetMs` or failed; either is
 * logged with its reason. Resolves by the budget at the latest: a read still running then is left to finish (its
 * result or failure is dropped, never an unhandled rejection).
 */
export async function fetchProfileWithin(
  facts: Pick<ProfileFacts, 'list'>,
  userId: string,
  budgetMs: number,
  log: Pick<Logger, 'warn'> | undefined,
  scopes: readonly MemoryScope[] = [USER_SCOPE],
): Promise<ProfileFact[] | undefined> {
  type Outcome = { facts: ProfileFact[] } | { error: unknown } | 'timeout';
  // A port that throws instead of rejecting is a failure like any other. Every scope the conversation reads comes in
  // the one query.
  const read: Promise<Outcome> = Promise.resolve()
    .then(() => facts.list(userId, { statuses: ['active'], scopes }))
    .then(
      (found) => ({ facts: found }),
      (error: unknown) => ({ error }),
    );
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<Outcome>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), budgetMs);
  });
  try {
    const outcome = await Promise.race([read, timeout]);
    if (outcome === 'timeout') {
      log?.warn(
        `The profile of user ${userId} did not answer within ${budgetMs} ms: the conversation starts with the ` +
          'basic system prompt.',
      );
      return undefined;
    }
    if ('error' in outcome) {
      log?.warn(
        `The profile of user ${userId} could not be read: the conversation starts with the basic system prompt.`,
        outcome.error,
      );
      return undefined;
    }
    // The port filters by status and scope; the prompt must never carry a superseded or retracted fact, nor one of
    // another project or assistant, whatever it does.
    return outcome.facts.filter((fact) => fact.status === 'active' && inScopes(fact, scopes));
  } finally {
    clearTimeout(timer);
  }
}
