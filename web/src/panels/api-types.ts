// The answers of the history, memory and knowledge endpoints the panels read (docs/api.md describes them); only
// the fields the panels show.
export interface ConversationSummary {
  sessionId: string;
  title: string;
  createdAt: string;
  lastActivity: string;
  messageCount: number;
  /** The messages of the branch it shows: what the sidebar counts. */
  visibleMessageCount: number;
  preview: string;
}

export interface ConversationPage {
  conversations: ConversationSummary[];
  continuationToken?: string;
}

export interface FactSource {
  sessionId: string;
  chatMessageId: string;
  at: string;
}

export interface ProfileFact {
  factId: string;
  category: string;
  statement: string;
  status: 'active' | 'superseded' | 'retracted';
  validFrom: string;
  provenance: FactSource[];
  /** Where it lives: `user` (the shared memory), `assistant:<id>` or `project:<id>`. */
  scope?: string;
}

export interface MemorySummary {
  sessionId: string;
  summary: string;
  themes: string[];
  timestamp: string;
  scope?: string;
}

export interface MemoriesPage {
  facts: ProfileFact[];
  summaries: MemorySummary[];
  continuationToken?: string;
}

export type DocumentStatus = 'queued' | 'processing' | 'ready' | 'failed';
export type LibraryName = 'private' | 'shared';

export interface KnowledgeDocument {
  documentId: string;
  title: string;
  fileName?: string;
  format: string;
  bytes: number;
  status: DocumentStatus;
  library: LibraryName;
  ownedByYou: boolean;
  createdAt: string;
  updatedAt: string;
  pageCount?: number;
  chunkCount?: number;
  failure?: { code: string; reason: string };
}

export interface DocumentsPage {
  documents: KnowledgeDocument[];
  continuationToken?: string;
}

/** A date as the user's locale writes it, with the time when it is today. */
export function shortDate(iso: string, now = new Date()): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const sameDay = date.toDateString() === now.toDateString();
  return sameDay
    ? date.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' })
    : date.toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric' });
}

/** "1 message", "N messages": a conversation's count as the sidebar shows it. */
export function messagesLabel(count: number): string {
  return count === 1 ? '1 message' : `${count} messages`;
}
