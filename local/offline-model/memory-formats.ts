// Stand-in rules for the memory worker's formats (named by the vocabulary): profile changes read from fixed
// sentence patterns of the user's message, and a conversation summary built from its words, so a local conversation
// gets facts with evidence and a searchable summary without a language model. Pure; documented in README.md.
import { parseJsonObject } from './request-schema.js';
import { STOP_WORDS, contentWords, lowerWords, mostFrequent } from './text-tokens.js';
import type { OfflineModelVocabulary } from './vocabulary.js';

const OBJECT_CHARS = 200;
const EVIDENCE_CHARS = 500;
const SUMMARY_CHARS = 2_000;
const SUMMARY_SENTENCE_CHARS = 200;
const LIST_ITEMS = 12;
const LIST_ITEM_CHARS = 80;
const THEMES_PER_EXCHANGE = 3;

interface ActiveFact {
  factId: string;
  category: string;
  statement: string;
}

interface FactChange {
  category: string;
  statement: string;
  evidence: string;
}

export interface StandInProfileChanges {
  add: FactChange[];
  reaffirm: { factId: string; evidence: string }[];
  replace: (FactChange & { factId: string; reason: string })[];
  retract: { factId: string; evidence: string; reason: string }[];
}

export interface StandInSummary {
  summary: string;
  themes: string[];
  persons: string[];
  places: string[];
  user_sentiment: 'positive' | 'neutral' | 'negative' | 'mixed';
}

/** The value of a memory format, or undefined when the name is another or its input is not the expected JSON. */
export function memoryFormatValue(
  formats: OfflineModelVocabulary['formats'],
  name: string,
  input: string,
): unknown {
  const { profileChanges, conversationSummary } = formats;
  if (name !== profileChanges && name !== conversationSummary) return undefined;
  const fields = parseJsonObject(input);
  if (fields === undefined) return undefined;
  if (name === profileChanges) {
    const facts = Array.isArray(fields['activeFacts']) ? fields['activeFacts'].filter(isActiveFact) : [];
    return standInProfileChanges(text(fields['userMessage']), facts);
  }
  const exchange = (typeof fields['exchange'] === 'object' ? fields['exchange'] : null) ?? {};
  return standInConversationSummary(previousSummary(fields['previousSummary']), {
    userMessage: text((exchange as Record<string, unknown>)['userMessage']),
  });
}

// --- Profile changes ---------------------------------------------------------------------------------------

/** What a rule makes of a sentence: the fact, and the words that say its value. */
interface Made {
  category: string;
  statement: string;
  object: string;
}

/** A sentence pattern, what it makes of the sentence, and (optionally) the active facts it contradicts. */
interface Rule {
  pattern: RegExp;
  fact: (match: RegExpExecArray) => Made;
  /** An active fact this one replaces: the same attribute with another value, or the opposite taste. */
  contradicts?: (known: ActiveFact, made: Made) => boolean;
}

/** The same attribute: the part of the statement before the value is the same ("The user works at "). */
const sameAttribute = (known: ActiveFact, made: Made) =>
  known.category === made.category &&
  known.statement.startsWith(made.statement.slice(0, -made.object.length - 1));
/** The opposite taste: a fact of the other category that names the same thing. */
const oppositeTaste = (category: string) => (known: ActiveFact, made: Made) =>
  known.category === category && includesWords(known.statement, made.object);

const RULES: Rule[] = [
  {
    pattern: /^I (?:really )?(?:dislike|hate|can['’]t stand|cannot stand|don['’]t like|do not like) (.+)$/i,
    fact: (m) => ({
      category: 'dislikes',
      statement: `The user dislikes ${object(m[1])}.`,
      object: object(m[1]),
    }),
    contradicts: oppositeTaste('interests'),
  },
  {
    pattern: /^I (?:really )?(like|love|enjoy) (.+)$/i,
    fact: (m) => ({
      category: 'interests',
      statement: `The user ${lower(m[1])}s ${object(m[2])}.`,
      object: object(m[2]),
    }),
    contradicts: oppositeTaste('dislikes'),
  },
  {
    pattern: /^I prefer (.+)$/i,
    fact: (m) => ({
      category: /\b(?:answers?|repl(?:y|ies)|responses?|bullet|format|short|long|brief|detailed)\b/i.test(
        m[1] ?? '',
      )
        ? 'output_preferences'
        : 'personal_preferences',
      statement: `The user prefers ${object(m[1])}.`,
      object: object(m[1]),
    }),
  },
  {
    pattern: /^I work (as|at|for|in) (.+)$/i,
    fact: (m) => ({
      category: 'work_profile',
      statement: `The user works ${lower(m[1])} ${object(m[2])}.`,
      object: object(m[2]),
    }),
    contradicts: sameAttribute,
  },
  {
    pattern: /^(?:my name is|call me) (.+)$/i,
    fact: (m) => ({
      category: 'personal_preferences',
      statement: `The user wants to be called ${object(m[1])}.`,
      object: object(m[1]),
    }),
    contradicts: sameAttribute,
  },
  {
    pattern: /^my goal is (?:to )?(.+)$/i,
    fact: (m) => ({
      category: 'goals',
      statement: `The user's goal is to ${object(m[1])}.`,
      object: object(m[1]),
    }),
  },
  {
    pattern: /^I speak (.+)$/i,
    fact: (m) => ({
      category: 'knowledge',
      statement: `The user speaks ${object(m[1])}.`,
      object: object(m[1]),
    }),
  },
  {
    pattern: /^I want you to be (.+)$/i,
    fact: (m) => ({
      category: 'assistant_preferences',
      statement: `The user wants the assistant to be ${object(m[1])}.`,
      object: object(m[1]),
    }),
  },
  {
    pattern: /^I have an? (\p{L}+) (?:named|called) (.+)$/iu,
    fact: (m) => ({
      category: 'family_and_friends',
      statement: `The user has a ${lower(m[1])} named ${object(m[2])}.`,
      object: object(m[2]),
    }),
  },
  {
    pattern:
      /^my (wife|husband|partner|son|daughter|child|brother|sister|mother|mom|mum|father|dad|friend|boss|dog|cat)(?:'s name is| is called| is named| is) (.+)$/iu,
    fact: (m) => ({
      category: 'family_and_friends',
      statement: `The user's ${lower(m[1])} is ${object(m[2])}.`,
      object: object(m[2]),
    }),
  },
];

/** "I no longer X", "I don't X any more": the active fact that mentions X's object is retracted. */
const NO_LONGER =
  /^I (?:no longer|don['’]t|do not) (?:\p{L}+)(?: (?:as|at|for|in|with|to))? (.+?)(?: any ?more)?$/iu;
const NO_LONGER_MARK = /^I no longer |\bany ?more$/i;

/**
 * The profile changes of a user message, by sentence: a retraction ("I no longer X", "I don't X anymore" retract
 * the active fact that mentions X), else the first matching rule's fact — a reaffirmation when an active fact says
 * it already, a replacement when it contradicts one (another employer, another name, the opposite taste), else an
 * addition. Each change quotes its sentence as evidence.
 */
export function standInProfileChanges(
  userMessage: string,
  activeFacts: readonly ActiveFact[],
): StandInProfileChanges {
  const changes: StandInProfileChanges = { add: [], reaffirm: [], replace: [], retract: [] };
  const changed = new Set<string>();
  for (const sentence of sentences(userMessage)) {
    const evidence = [...sentence].slice(0, EVIDENCE_CHARS).join('');
    const stopped = NO_LONGER_MARK.test(sentence) ? NO_LONGER.exec(sentence) : null;
    if (stopped) {
      const gone = activeFacts.find(
        (fact) => !changed.has(fact.factId) && includesWords(fact.statement, object(stopped[1])),
      );
      if (gone) {
        changed.add(gone.factId);
        changes.retract.push({ factId: gone.factId, evidence, reason: `The user said: "${evidence}".` });
      }
      continue;
    }
    for (const rule of RULES) {
      const match = rule.pattern.exec(sentence);
      if (!match) continue;
      const fact = rule.fact(match);
      const same = activeFacts.find(
        (known) => known.category === fact.category && normal(known.statement) === normal(fact.statement),
      );
      const old = same
        ? undefined
        : activeFacts.find((known) => !changed.has(known.factId) && rule.contradicts?.(known, fact) === true);
      if (same) {
        if (!changed.has(same.factId)) changes.reaffirm.push({ factId: same.factId, evidence });
        changed.add(same.factId);
      } else if (old) {
        changed.add(old.factId);
        changes.replace.push({
          factId: old.factId,
          category: fact.category,
          statement: fact.statement,
          evidence,
          reason: `The user said: "${evidence}".`,
        });
      } else if (!changes.add.some((added) => normal(added.statement) === normal(fact.statement))) {
        changes.add.push({ category: fact.category, statement: fact.statement, evidence });
      }
      break;
    }
  }
  return changes;
}

// --- Conversation summary ----------------------------------------------------------------------------------

const POSITIVE = new Set(
  'love like enjoy great thanks thank good happy awesome excellent nice wonderful glad perfect helpful'.split(
    ' ',
  ),
);
const NEGATIVE = new Set(
  'hate dislike bad terrible awful angry sad annoyed disappointed wrong frustrated worst useless broken'.split(
    ' ',
  ),
);
/** The history rules' stop words and the words of likes and wishes, which name no theme. */
const THEME_STOP_WORDS = new Set([
  ...STOP_WORDS,
  ...'also like love want know need some any very really'.split(' '),
]);
const NAME = "\\p{Lu}[\\p{L}'-]*(?: \\p{Lu}[\\p{L}'-]*){0,2}";
const PERSON = new RegExp(
  `\\b(?:with|named|called|friend|wife|husband|son|daughter|meet|met) (${NAME})`,
  'gu',
);
const PLACE = new RegExp(`\\b(?:in|to|from|at|near|visit|visiting|visited) (${NAME})`, 'gu');

/**
 * The summary after one more exchange: the previous summary's sentences and the first sentence of the user's
 * message (the answer is the offline model's own, so it says nothing), the first sentence kept and the oldest after
 * it dropped past 2,000 characters; themes, persons and places merged into the previous lists; the sentiment from
 * small word lists, "mixed" once it has been both.
 */
export function standInConversationSummary(
  previous: StandInSummary | undefined,
  exchange: { userMessage: string },
): StandInSummary {
  const said = exchange.userMessage
    .split(/(?<=[.!?…])\s+|[\r\n]+/)
    .map((sentence) => sentence.trim())
    .find((sentence) => sentence !== '');
  const opening =
    said === undefined ? 'The user sent an empty message.' : finished(cutText(said, SUMMARY_SENTENCE_CHARS));
  const kept = previous ? previous.summary.split(/(?<=[.!?…])\s+/).filter((s) => s !== '') : [];
  kept.push(opening);
  while (kept.join(' ').length > SUMMARY_CHARS && kept.length > 2) kept.splice(1, 1);
  const summary = cutText(kept.join(' '), SUMMARY_CHARS);

  const message = exchange.userMessage;
  return {
    summary,
    themes: merged(previous?.themes, frequentWords(message, THEMES_PER_EXCHANGE)),
    persons: merged(previous?.persons, captured(message, PERSON)),
    places: merged(previous?.places, captured(message, PLACE)),
    user_sentiment: combined(previous?.user_sentiment, sentimentOf(message)),
  };
}

function sentimentOf(message: string): StandInSummary['user_sentiment'] {
  const words = message.toLowerCase().match(/\p{L}+/gu) ?? [];
  const positive = words.some((word) => POSITIVE.has(word));
  const negative = words.some((word) => NEGATIVE.has(word));
  return positive && negative ? 'mixed' : positive ? 'positive' : negative ? 'negative' : 'neutral';
}

function combined(
  previous: StandInSummary['user_sentiment'] | undefined,
  now: StandInSummary['user_sentiment'],
): StandInSummary['user_sentiment'] {
  if (previous === undefined || previous === 'neutral') return now;
  if (now === 'neutral' || now === previous) return previous;
  return 'mixed';
}

/** The most frequent content words (3+ letters, no stop words), ties by first appearance. */
function frequentWords(message: string, count: number): string[] {
  return mostFrequent(contentWords(message, THEME_STOP_WORDS), count);
}

function captured(message: string, pattern: RegExp): string[] {
  return [...message.matchAll(pattern)].map((match) => match[1] ?? '').filter((name) => name !== 'I');
}

/** The previous list, then the new entries not in it (case-insensitively), at most 12 of 80 characters each. */
function merged(previous: readonly string[] | undefined, added: readonly string[]): string[] {
  const list = [...(previous ?? [])];
  for (const item of added) {
    const entry = cutText(item, LIST_ITEM_CHARS);
    if (!list.some((known) => known.toLowerCase() === entry.toLowerCase())) list.push(entry);
  }
  return list.slice(0, LIST_ITEMS);
}

// --- Text helpers ------------------------------------------------------------------------------------------

/** A message's sentences: split after . ! ? ; and line breaks, trimmed, without their final punctuation. */
function sentences(message: string): string[] {
  return message
    .split(/(?<=[.!?;])\s+|[\r\n]+/)
    .map((sentence) =>
      sentence
        .trim()
        .replace(/[.!?;,]+$/, '')
        .trim(),
    )
    .filter((sentence) => sentence !== '');
}

function object(text: string | undefined): string {
  return cutText((text ?? '').trim(), OBJECT_CHARS);
}

const lower = (text: string | undefined) => (text ?? '').toLowerCase();
const normal = (text: string) =>
  text
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .replace(/[.!]+$/, '')
    .trim();
const finished = (text: string) => (/[.!?…]$/.test(text) ? text : `${text}.`);

/** Whether every word of `words` is a word of `text` (case-insensitively). */
function includesWords(text: string, words: string): boolean {
  const have = new Set(lowerWords(text));
  const wanted = lowerWords(words);
  return wanted.length > 0 && wanted.every((word) => have.has(word));
}

function cutText(text: string, limit: number): string {
  const chars = [...text];
  return chars.length <= limit ? text : `${chars.slice(0, limit - 1).join('')}…`;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function isActiveFact(value: unknown): value is ActiveFact {
  if (typeof value !== 'object' || value === null) return false;
  const fact = value as Record<string, unknown>;
  return (
    typeof fact['factId'] === 'string' &&
    typeof fact['category'] === 'string' &&
    typeof fact['statement'] === 'string'
  );
}

function previousSummary(value: unknown): StandInSummary | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const fields = value as Record<string, unknown>;
  const list = (key: string) =>
    Array.isArray(fields[key]) ? fields[key].filter((item): item is string => typeof item === 'string') : [];
  const sentiment = fields['user_sentiment'];
  return {
    summary: text(fields['summary']),
    themes: list('themes'),
    persons: list('persons'),
    places: list('places'),
    user_sentiment:
      sentiment === 'positive' || sentiment === 'negative' || sentiment === 'mixed' ? sentiment : 'neutral',
  };
}
