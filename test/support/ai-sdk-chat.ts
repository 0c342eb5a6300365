// The AI SDK's own Chat in Node, for tests that read our UI message stream as a useChat app would: its state kept
// in plain fields, as its React and Vue bindings keep it in their own stores.
import {
  AbstractChat,
  type ChatState,
  type ChatStatus,
  type DefaultChatTransport,
  type FinishReason,
  type UIMessage,
} from 'ai';
import type { UiMessageMetadata } from '../../shared/streaming/ui-message-chunks.js';

export type UiChatMessage = UIMessage<UiMessageMetadata>;

export class NodeChat extends AbstractChat<UiChatMessage> {
  /** The finish reason of each answer the Chat saw end, in order. */
  finishReasons: (FinishReason | undefined)[] = [];
  constructor(id: string, transport: DefaultChatTransport<UiChatMessage>, messages: UiChatMessage[] = []) {
    const state = new PlainState(messages);
    super({ id, transport, state, onFinish: ({ finishReason }) => this.finishReasons.push(finishReason) });
  }
}

class PlainState implements ChatState<UiChatMessage> {
  status: ChatStatus = 'ready';
  error: Error | undefined = undefined;
  constructor(public messages: UiChatMessage[]) {}
  pushMessage = (message: UiChatMessage) => {
    this.messages = [...this.messages, message];
  };
  popMessage = () => {
    this.messages = this.messages.slice(0, -1);
  };
  replaceMessage = (index: number, message: UiChatMessage) => {
    this.messages = this.messages.map((m, i) => (i === index ? message : m));
  };
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

/** A message's text parts, joined. */
export const textOf = (message: UiChatMessage | undefined) =>
  (message?.parts ?? []).map((part) => (part.type === 'text' ? part.text : '')).join('');
