// What the offline model knows of the app it stands in for, handed in by whoever starts it (the local runtime): the
// names of the structured-output formats and search tools its stand-in rules answer, and how the app splits words.

/** How the app's own search reads text: the embeddings' words meet where its full-text search's do. */
export interface TextAnalysis {
  /** A text's words, lower-cased, in order. */
  words: (text: string) => string[];
  isStopWord: (word: string) => boolean;
  stem: (word: string) => string;
}

export interface OfflineModelVocabulary {
  /** `response_format.json_schema.name` of each format a stand-in rule answers; a format left out has no rule. */
  formats: {
    /** History: an exchange's index line and tags (and a title when the schema asks for one). */
    exchangeIndex?: string;
    /** History: the session's rolling summary. */
    sessionSummary?: string;
    /** Memory: changes to the user's profile facts. */
    profileChanges?: string;
    /** Memory: the conversation's summary, themes, persons, places and sentiment. */
    conversationSummary?: string;
  };
  /** Names of the tools the model calls by its search rules; a tool left out is called only when named. */
  tools: {
    searchConversationHistory?: string;
    searchKnowledgeBase?: string;
  };
  text: TextAnalysis;
}

/** Words as runs of letters and digits, no stop words, no stemming: what the model knows without an app. */
export const PLAIN_TEXT: TextAnalysis = {
  words: (text) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [],
  isStopWord: () => false,
  stem: (word) => word,
};

/** No format or tool rules: the generic rules (schemas, named tools, word counts) only. */
export const NO_VOCABULARY: OfflineModelVocabulary = { formats: {}, tools: {}, text: PLAIN_TEXT };
