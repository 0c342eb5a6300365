// The product's names for what the offline model's stand-in rules answer: its history and memory formats, its
// search tools, and its full-text search's words, stop words and stems. The local runtime hands these in.
import { EXCHANGE_INDEX_FORMAT, SESSION_SUMMARY_FORMAT } from '../shared/history/history-llm.js';
import { SEARCH_KNOWLEDGE_BASE_TOOL } from '../shared/knowledge/contracts.js';
import { SEARCH_CONVERSATION_HISTORY_TOOL } from '../shared/memory/contracts.js';
import { CONVERSATION_SUMMARY_FORMAT, PROFILE_CHANGES_FORMAT } from '../shared/memory/memory-llm.js';
import { isStopWord, stem, words } from '../shared/search/full-text.js';
import type { OfflineModelVocabulary } from './offline-model/vocabulary.js';

export const productVocabulary: OfflineModelVocabulary = {
  formats: {
    exchangeIndex: EXCHANGE_INDEX_FORMAT,
    sessionSummary: SESSION_SUMMARY_FORMAT,
    profileChanges: PROFILE_CHANGES_FORMAT,
    conversationSummary: CONVERSATION_SUMMARY_FORMAT,
  },
  tools: {
    searchConversationHistory: SEARCH_CONVERSATION_HISTORY_TOOL,
    searchKnowledgeBase: SEARCH_KNOWLEDGE_BASE_TOOL,
  },
  text: { words, isStopWord, stem },
};
