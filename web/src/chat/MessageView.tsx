// One message of the chat: a user's text (copy, edit, and retry when its turn failed), or an answer's reasoning
// ("Thought for N s") and tool calls (collapsed), its Markdown, its numbered sources, and its actions (copy,
// regenerate, the alternatives of the turn).
import { ApprovalCard } from './ApprovalCard';
import type { AnswerApproval } from './approvals';
import { MessageFiles } from './AttachmentPreviews';
import type { ReadAttachment } from './AttachmentPreviews';
import { ChevronLeft, ChevronRight, Pencil, RefreshCw, RotateCcw } from 'lucide-react';
import { useState } from 'react';
import type { ReactNode } from 'react';
import type { Rating } from './answer-feedback';
import { CopyButton } from './CopyButton';
import { FeedbackButtons } from './FeedbackButtons';
import { SourceChips } from './SourceChips';
import type { ReadDocument } from './SourceChips';
import { LazyMarkdown } from './LazyMarkdown';
import { messageText } from './messages';
import type { ChatUIMessage } from './messages';

export interface MessageActions {
  busy: boolean;
  onRegenerate(message: ChatUIMessage): void;
  onEdit(message: ChatUIMessage, text: string): void;
  /** Sends a failed turn's message again. */
  onRetry(message: ChatUIMessage): void;
  onSwitch(chatMessageId: string): void;
  /** What the knowledge base knows of a cited document. */
  readDocument: ReadDocument;
  /** A stored file's bytes, for the files of a message read back from history. */
  readAttachment: ReadAttachment;
  /** Rates an answer, or with null takes the rating back. */
  onRate(message: ChatUIMessage, rating: Rating | null): void;
  /** Answers a tool call of the message that waits for the user's yes. */
  answerApproval: AnswerApproval;
  /** Sends the user to connect their account to an MCP server a tool of which needed it. */
  onConnect(serverId: string): void;
}

/** A `data-mcp-connect` part: the turn called a tool of an MCP server the user has not connected yet. */
function connectNeedOf(part: {
  type: string;
  data?: unknown;
}): { serverId: string; serverName: string } | undefined {
  if (part.type !== 'data-mcp-connect' || typeof part.data !== 'object' || part.data === null)
    return undefined;
  const { serverId, serverName } = part.data as Record<string, unknown>;
  return typeof serverId === 'string' && typeof serverName === 'string'
    ? { serverId, serverName }
    : undefined;
}

/** What the page knows of a message beyond its parts: how long its reasoning took, and why its turn failed. */
export interface MessageExtras {
  /** Seconds of reasoning, measured while it streamed. */
  thoughtSeconds?: number;
  /** The turn's error (its code and message), when it failed. */
  failure?: { code?: string; message?: string };
}

function pretty(value: unknown): string {
  if (typeof value === 'string') return value;
  return JSON.stringify(value, null, 2) ?? String(value);
}

const actionRow = 'mt-1 flex flex-wrap items-center gap-0.5 text-sm';

export function MessageView(props: {
  message: ChatUIMessage;
  streaming: boolean;
  actions: MessageActions;
  extras?: MessageExtras;
}): ReactNode {
  return props.message.role === 'user' ? (
    <UserMessage message={props.message} actions={props.actions} extras={props.extras ?? {}} />
  ) : (
    <AssistantMessage
      message={props.message}
      streaming={props.streaming}
      actions={props.actions}
      extras={props.extras ?? {}}
    />
  );
}

/** A failed turn's reason as the error event named it: its message, and its code when it has one. */
export function FailureNotice(props: { failure: { code?: string; message?: string } }): ReactNode {
  const { code, message } = props.failure;
  return (
    <p className="alert mt-1 text-sm" role="status">
      This message was not answered: {message ?? 'the turn failed'}
      {code === undefined ? null : <span className="ml-1 font-mono text-xs">({code})</span>}
    </p>
  );
}

function UserMessage(props: {
  message: ChatUIMessage;
  actions: MessageActions;
  extras: MessageExtras;
}): ReactNode {
  const { message, actions } = props;
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState('');
  const text = messageText(message);
  const failure = message.metadata?.failure ?? props.extras.failure;
  if (editing)
    return (
      <form
        className="w-full max-w-[min(40rem,100%)] self-end rounded-lg bg-bubble p-2"
        aria-label="Edit message"
        onSubmit={(event) => {
          event.preventDefault();
          if (draft.trim() === '') return;
          setEditing(false);
          actions.onEdit(message, draft);
        }}
      >
        <label className="sr-only" htmlFor={`edit-${message.id}`}>
          Edited message
        </label>
        <textarea
          id={`edit-${message.id}`}
          className="w-full resize-y"
          value={draft}
          onChange={(event) => setDraft(event.target.value)}
          autoFocus
          rows={3}
        />
        <div className="mt-1 flex justify-end gap-1">
          <button type="button" className="btn btn-quiet" onClick={() => setEditing(false)}>
            Cancel
          </button>
          <button type="submit" className="btn btn-primary">
            Save and send
          </button>
        </div>
      </form>
    );
  return (
    <article
      className="group flex max-w-[min(40rem,90%)] flex-col items-end self-end"
      aria-label="Your message"
    >
      <MessageFiles parts={message.parts} readAttachment={actions.readAttachment} />
      <div className="rounded-2xl bg-bubble px-3.5 py-2 whitespace-pre-wrap [overflow-wrap:anywhere]">
        {text}
      </div>
      {message.metadata?.useMemory === false && <p className="muted m-0 text-xs">Not remembered</p>}
      {failure !== undefined && <FailureNotice failure={failure} />}
      <div className={actionRow}>
        {failure !== undefined && (
          <button
            type="button"
            className="btn btn-small"
            disabled={actions.busy}
            onClick={() => actions.onRetry(message)}
          >
            <RotateCcw size={14} aria-hidden />
            Retry
          </button>
        )}
        <CopyButton text={text} label="Copy message" />
        <button
          type="button"
          className="btn btn-quiet btn-icon size-8"
          aria-label="Edit"
          title="Edit"
          disabled={actions.busy}
          onClick={() => {
            setDraft(text);
            setEditing(true);
          }}
        >
          <Pencil size={16} aria-hidden />
        </button>
      </div>
    </article>
  );
}

function ReasoningPart(props: { text: string; streaming: boolean; seconds: number | undefined }): ReactNode {
  const label = props.streaming
    ? 'Thinking…'
    : props.seconds === undefined
      ? 'Reasoning'
      : `Thought for ${Math.max(1, Math.round(props.seconds))} s`;
  return (
    <details className="my-2 rounded-lg border border-line bg-soft px-3 py-1 text-sm">
      <summary className="cursor-pointer text-muted-foreground">{label}</summary>
      <pre className="max-h-64 overflow-auto font-mono text-xs whitespace-pre-wrap [overflow-wrap:anywhere]">
        {props.text}
      </pre>
    </details>
  );
}

function AssistantMessage(props: {
  message: ChatUIMessage;
  streaming: boolean;
  actions: MessageActions;
  extras: MessageExtras;
}): ReactNode {
  const { message, actions } = props;
  const sources = message.parts.filter((part) => part.type === 'source-document');
  const alternatives = message.metadata?.alternatives;
  const finishReason = message.metadata?.finishReason;
  const text = messageText(message);
  // Each model round may reason: shown as one block, where the first reasoning was, timed once.
  const reasoningParts = message.parts.filter((part) => part.type === 'reasoning');
  const firstReasoning = message.parts.findIndex((part) => part.type === 'reasoning');
  return (
    <article className="w-full max-w-3xl self-start" aria-label="Answer" aria-busy={props.streaming}>
      {message.parts.map((part, index) => {
        const key = `${message.id}-${index}`;
        switch (part.type) {
          case 'reasoning':
            return index !== firstReasoning ? null : (
              <ReasoningPart
                key={key}
                text={reasoningParts.map((reasoning) => reasoning.text).join('\n\n')}
                streaming={props.streaming && reasoningParts.at(-1)?.state === 'streaming'}
                seconds={props.extras.thoughtSeconds}
              />
            );
          case 'dynamic-tool':
            return part.state === 'approval-requested' ? (
              <ApprovalCard
                key={key}
                toolName={part.toolName}
                input={part.input}
                onAnswer={(answer) => actions.answerApproval(message, part.approval.id, answer)}
              />
            ) : (
              <details
                key={key}
                className="tool-call my-2 rounded-lg border border-line bg-soft px-3 py-1 text-sm"
              >
                <summary className="cursor-pointer">
                  Tool {part.toolName}
                  {part.state === 'output-available'
                    ? ': done'
                    : part.state === 'output-error'
                      ? ': failed'
                      : ': running'}
                </summary>
                <p className="muted my-1">Input</p>
                <pre className="max-h-64 overflow-auto font-mono text-xs whitespace-pre-wrap [overflow-wrap:anywhere]">
                  {pretty(part.input)}
                </pre>
                {part.state === 'output-available' && (
                  <>
                    <p className="muted my-1">Result</p>
                    <pre className="max-h-64 overflow-auto font-mono text-xs whitespace-pre-wrap [overflow-wrap:anywhere]">
                      {pretty(part.output)}
                    </pre>
                  </>
                )}
                {part.state === 'output-error' && (
                  <>
                    <p className="muted my-1">Error</p>
                    <pre className="max-h-64 overflow-auto font-mono text-xs whitespace-pre-wrap">
                      {part.errorText}
                    </pre>
                  </>
                )}
              </details>
            );
          case 'text':
            return <LazyMarkdown key={key} text={part.text} streaming={props.streaming} />;
          default: {
            const need = connectNeedOf(part);
            return need === undefined ? null : (
              <p key={key} className="my-2 flex flex-wrap items-center gap-2 text-sm" role="status">
                <span>The MCP server {need.serverName} needs you to connect your account.</span>
                <button
                  type="button"
                  className="btn btn-primary btn-small"
                  aria-label={`Connect ${need.serverName}`}
                  onClick={() => actions.onConnect(need.serverId)}
                >
                  Connect
                </button>
              </p>
            );
          }
        }
      })}
      {sources.length > 0 && <SourceChips sources={sources} readDocument={actions.readDocument} />}
      {finishReason === 'cancelled' && <p className="muted my-1 text-sm">Stopped</p>}
      {!props.streaming && (
        <div className={actionRow}>
          {alternatives !== undefined && alternatives.count > 1 && (
            <nav className="flex items-center" aria-label="Alternatives">
              <button
                type="button"
                className="btn btn-quiet btn-icon size-8"
                aria-label="Previous alternative"
                disabled={actions.busy || alternatives.index === 0}
                onClick={() => {
                  const id = alternatives.chatMessageIds[alternatives.index - 1];
                  if (id !== undefined) actions.onSwitch(id);
                }}
              >
                <ChevronLeft size={16} aria-hidden />
              </button>
              <span aria-live="polite" className="tabular-nums">
                {alternatives.index + 1}/{alternatives.count}
              </span>
              <button
                type="button"
                className="btn btn-quiet btn-icon size-8"
                aria-label="Next alternative"
                disabled={actions.busy || alternatives.index >= alternatives.count - 1}
                onClick={() => {
                  const id = alternatives.chatMessageIds[alternatives.index + 1];
                  if (id !== undefined) actions.onSwitch(id);
                }}
              >
                <ChevronRight size={16} aria-hidden />
              </button>
            </nav>
          )}
          {text === '' ? null : <CopyButton text={text} label="Copy answer" />}
          <FeedbackButtons
            rating={message.metadata?.feedback}
            disabled={actions.busy}
            onRate={(rating) => actions.onRate(message, rating)}
          />
          <button
            type="button"
            className="btn btn-quiet btn-icon size-8"
            aria-label="Regenerate"
            title="Regenerate"
            disabled={actions.busy}
            onClick={() => actions.onRegenerate(message)}
          >
            <RefreshCw size={16} aria-hidden />
          </button>
        </div>
      )}
    </article>
  );
}
