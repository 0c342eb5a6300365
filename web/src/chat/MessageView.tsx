// One message of the chat: a user's text (with edit), or an answer's reasoning and tool calls (collapsed), its
// Markdown, its numbered sources, and its actions (regenerate, the alternatives of the turn).
import { useState } from 'react';
import type { ReactNode } from 'react';
import { Markdown } from './Markdown';
import { messageText, sourceDetails } from './messages';
import type { ChatUIMessage } from './messages';

export interface MessageActions {
  busy: boolean;
  onRegenerate(message: ChatUIMessage): void;
  onEdit(message: ChatUIMessage, text: string): void;
  onSwitch(chatMessageId: string): void;
}

function pretty(value: unknown): string {
  if (typeof value === 'string') return value;
  return JSON.stringify(value, null, 2) ?? String(value);
}

export function MessageView(props: {
  message: ChatUIMessage;
  streaming: boolean;
  actions: MessageActions;
}): ReactNode {
  return props.message.role === 'user' ? (
    <UserMessage message={props.message} actions={props.actions} />
  ) : (
    <AssistantMessage message={props.message} streaming={props.streaming} actions={props.actions} />
  );
}

function UserMessage(props: { message: ChatUIMessage; actions: MessageActions }): ReactNode {
  const { message, actions } = props;
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState('');
  const text = messageText(message);
  if (editing)
    return (
      <form
        className="message message-user"
        aria-label="Edit message"
        onSubmit={(event) => {
          event.preventDefault();
          if (draft.trim() === '') return;
          setEditing(false);
          actions.onEdit(message, draft);
        }}
      >
        <label className="visually-hidden" htmlFor={`edit-${message.id}`}>
          Edited message
        </label>
        <textarea
          id={`edit-${message.id}`}
          value={draft}
          onChange={(event) => setDraft(event.target.value)}
          autoFocus
          rows={3}
        />
        <div className="message-actions">
          <button type="submit" className="button-primary">
            Save and send
          </button>
          <button type="button" onClick={() => setEditing(false)}>
            Cancel
          </button>
        </div>
      </form>
    );
  return (
    <article className="message message-user" aria-label="Your message">
      <div>{text}</div>
      {message.metadata?.useMemory === false && <p className="muted">Not remembered</p>}
      {message.metadata?.failure !== undefined && (
        <p className="chat-error" role="status">
          This message was not answered: {message.metadata.failure.message ?? 'the turn failed'}
        </p>
      )}
      <div className="message-actions">
        <button
          type="button"
          disabled={actions.busy}
          onClick={() => {
            setDraft(text);
            setEditing(true);
          }}
        >
          Edit
        </button>
      </div>
    </article>
  );
}

function AssistantMessage(props: {
  message: ChatUIMessage;
  streaming: boolean;
  actions: MessageActions;
}): ReactNode {
  const { message, actions } = props;
  const sources = message.parts.filter((part) => part.type === 'source-document');
  const alternatives = message.metadata?.alternatives;
  const finishReason = message.metadata?.finishReason;
  return (
    <article className="message message-assistant" aria-label="Answer" aria-busy={props.streaming}>
      {message.parts.map((part, index) => {
        const key = `${message.id}-${index}`;
        switch (part.type) {
          case 'reasoning':
            return (
              <details key={key}>
                <summary>Reasoning</summary>
                <pre>{part.text}</pre>
              </details>
            );
          case 'dynamic-tool':
            return (
              <details key={key} className="tool-call">
                <summary>
                  Tool {part.toolName}
                  {part.state === 'output-available'
                    ? ': done'
                    : part.state === 'output-error'
                      ? ': failed'
                      : ': running'}
                </summary>
                <p className="muted">Input</p>
                <pre>{pretty(part.input)}</pre>
                {part.state === 'output-available' && (
                  <>
                    <p className="muted">Result</p>
                    <pre>{pretty(part.output)}</pre>
                  </>
                )}
                {part.state === 'output-error' && (
                  <>
                    <p className="muted">Error</p>
                    <pre>{part.errorText}</pre>
                  </>
                )}
              </details>
            );
          case 'text':
            return <Markdown key={key} text={part.text} streaming={props.streaming} />;
          default:
            return null;
        }
      })}
      {sources.length > 0 && (
        <ol className="citations" aria-label="Sources">
          {sources.map((source) => {
            const details = sourceDetails(source);
            return (
              <li key={source.sourceId}>
                <strong>{source.title}</strong>
                {details.citation !== undefined && <span className="muted"> {details.citation}</span>}
                {details.excerpt !== undefined && <blockquote>{details.excerpt}</blockquote>}
              </li>
            );
          })}
        </ol>
      )}
      {finishReason === 'cancelled' && <p className="muted">Stopped</p>}
      {!props.streaming && (
        <div className="message-actions">
          {alternatives !== undefined && alternatives.count > 1 && (
            <nav className="alternatives" aria-label="Alternatives">
              <button
                type="button"
                aria-label="Previous alternative"
                disabled={actions.busy || alternatives.index === 0}
                onClick={() => {
                  const id = alternatives.chatMessageIds[alternatives.index - 1];
                  if (id !== undefined) actions.onSwitch(id);
                }}
              >
                ‹
              </button>
              <span aria-live="polite">
                {alternatives.index + 1}/{alternatives.count}
              </span>
              <button
                type="button"
                aria-label="Next alternative"
                disabled={actions.busy || alternatives.index >= alternatives.count - 1}
                onClick={() => {
                  const id = alternatives.chatMessageIds[alternatives.index + 1];
                  if (id !== undefined) actions.onSwitch(id);
                }}
              >
                ›
              </button>
            </nav>
          )}
          <button type="button" disabled={actions.busy} onClick={() => actions.onRegenerate(message)}>
            Regenerate
          </button>
        </div>
      )}
    </article>
  );
}
