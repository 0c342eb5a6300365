// What the turn's steps run on: the ports they read and write, their settings, the clock and the logger.
import type { ConversationInstructions } from '../../conversation/conversation-shape.js';
import type { ConversationHeaders } from '../../history/conversation-headers.js';
import type { SessionMemory } from '../../history/session-memory.js';
import type { ChatMessage, LlmGateway, LlmUsage } from '../../llm/llm-gateway.js';
import type { LlmCost } from '../../usage/prices.js';
import type { Logger } from '../../logger.js';
import type { ProfileFacts } from '../../memory/profile-facts.js';
import type { QuotaServices } from '../../quota/quota-gate.js';
import type { MessagePublisher } from '../../messaging/message-publisher.js';
import type { CoalescingOptions } from '../../streaming/delta-coalescer.js';
import type { TurnEventSink } from '../../streaming/turn-event-sink.js';
import type { TurnEventStore } from '../../streaming/turn-event-store.js';
import type { ToolRegistry } from '../../tools/tool-registry.js';
import type { UserToolSource } from '../../mcp/turn-tools.js';
import type { TurnCancelSignals } from '../cancellation/turn-cancel-signals.js';
import type { TurnStateStore } from '../turn-state-store.js';
import type { WorkingMemoryStore } from '../../conversation/working-memory-store.js';
import type { GuardServices } from './step-guards.js';
import type { ApprovalMarks } from '../approvals/park-turn.js';

/** The guards' services (the tombstone, the eraser) and the rest of what the steps run on. */
export interface TurnServices extends GuardServices {
  workingMemory: WorkingMemoryStore;
  turns: TurnStateStore;
  events: TurnEventStore;
  sink: TurnEventSink;
  llm: LlmGateway;
  /** Reads the files of a prompt's messages in at the call (absent: messages go as they are). */
  attachments?: (userId: string, messages: readonly ChatMessage[]) => Promise<ChatMessage[]>;
  tools: ToolRegistry;
  /** The tools of the user's own and the operator's MCP servers, offered beside the built-in ones. */
  userTools?: UserToolSource;
  publisher: MessagePublisher;
  /** Conversation headers: each commit keeps its conversation's live fields. */
  headers: Pick<ConversationHeaders, 'get' | 'touch' | 'delete'>;
  /** The conversation's memory beyond the prompt: its digest goes into each round's prompt. */
  sessionMemory: Pick<SessionMemory, 'getDigest'>;
  /** The user's long-term profile: a new conversation's first round renders its active facts into the prompt. */
  profile: Pick<ProfileFacts, 'list'>;
  /** Stops asked for by turns' owners: read before each round and tool call, watched while the model streams. */
  cancellation: Pick<TurnCancelSignals, 'isRequested' | 'watch'>;
  settings: {
    promptTokenBudget: number;
    maxOutputTokens: number;
    coalescing: CoalescingOptions;
    /** How long a new conversation's first round waits for the profile (MEMORY_PROFILE_TIMEOUT_MS). */
    profileTimeoutMs: number;
    /** How files reach the model (ATTACHMENTS_IMAGE_TURNS, ATTACHMENTS_TEXT_TOKENS), so the history window counts them so. */
    attachments?: { imageTurns: number; textTokens: number };
  };
  /**
   * The instructions of a conversation's assistant (at the version it started with) and project, which its first
   * round renders into the system prompt; absent: none are read.
   */
  instructions?: ConversationInstructions;
  /** Where a turn's QUOTA_CONCURRENT_TURNS slot is freed as it ends. */
  quota?: Pick<QuotaServices, 'config' | 'state'>;
  /** Where a turn parking on its user's yes marks its session (absent: unmarked, as in tests of one step). */
  approvalMarks?: ApprovalMarks;
  /** Prices a turn's usage for its `message-end` (the model that answered, else the configured one). */
  pricing?: (usage: LlmUsage, model: string | undefined) => LlmCost;
  now?: () => Date;
  /** The invocation's logger: warnings, and the one line each finished turn leaves at the default level. */
  log?: Pick<Logger, 'warn'> & Partial<Pick<Logger, 'log'>>;
}

/** Where a step's events go: stored, then sent live, text coalesced. */
export type StreamPorts = Pick<TurnServices, 'events' | 'sink' | 'settings' | 'log'>;

/** Working memory, where a turn takes its place in the conversation's tree and is committed. */
export type PlacePorts = Pick<TurnServices, 'workingMemory' | 'log'>;

/** What one model call streams with: the model, the tools it is offered, the stop it watches. */
export type ModelPorts = StreamPorts &
  Pick<TurnServices, 'llm' | 'attachments' | 'tools' | 'userTools' | 'cancellation' | 'now'>;

/** What a runTool step runs on: the guard, its stream, the turn's record and results, the tools, the stop. */
export type ToolPorts = GuardServices &
  StreamPorts &
  Pick<TurnServices, 'turns' | 'tools' | 'userTools' | 'cancellation' | 'now' | 'pricing' | 'instructions'>;

/** What a failTurn step runs on: the guard, its stream, working memory and the record, the header, the end. */
export type FailPorts = GuardServices &
  StreamPorts &
  PlacePorts &
  Pick<TurnServices, 'turns' | 'headers' | 'publisher' | 'quota' | 'now' | 'pricing'>;

/** The step's clock, as the ISO time its messages are stamped with. */
export function now(services: Pick<TurnServices, 'now'>): string {
  return (services.now?.() ?? new Date()).toISOString();
}
