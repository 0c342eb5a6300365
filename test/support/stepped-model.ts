// A scripted model for tests of a turn's steps over in-memory ports: it streams each scripted round word by word and
// lets the test land at an exact point of the stream (a stop, a delete) before any word, honouring the request's
// abort signal as the real gateway does.
import { CANCELLED_FINISH_REASON } from '../../shared/chat/contracts/activities.js';
import type {
  LlmDelta,
  LlmGateway,
  LlmReply,
  StreamChatRequest,
  ToolCall,
} from '../../shared/llm/llm-gateway.js';

/** One reply of the model: its text, streamed a word at a time, and the tool calls it asks for. */
export interface ScriptedRound {
  content: string;
  toolCalls?: ToolCall[];
}

/**
 * A model that streams each round word by word, awaiting `beforeDelta` before each word (and once more before it
 * returns), and that honours the request's signal as the real gateway does: once it is aborted the call resolves
 * with what arrived, finish `cancelled` (with any tool calls it had assembled, which the turn must drop).
 */
export class SteppedModel implements Pick<LlmGateway, 'streamChat'> {
  readonly requests: StreamChatRequest[] = [];
  constructor(
    private readonly rounds: ScriptedRound[],
    private readonly beforeDelta: (call: number, index: number) => Promise<void> = () => Promise.resolve(),
  ) {}

  async streamChat(request: StreamChatRequest, onDelta?: (delta: LlmDelta) => void): Promise<LlmReply> {
    const call = this.requests.length;
    this.requests.push(request);
    const round = this.rounds[call];
    if (round === undefined) throw new Error(`no round ${call} scripted`);
    const words = round.content.split(/(?= )/).filter(Boolean);
    const toolCalls = round.toolCalls ?? [];
    let content = '';
    for (let index = 0; index <= words.length; index++) {
      await this.beforeDelta(call, index);
      if (request.signal?.aborted)
        return { content, reasoning: '', toolCalls, finishReason: CANCELLED_FINISH_REASON };
      const word = words[index];
      if (word === undefined) break;
      content += word;
      onDelta?.({ type: 'content', text: word });
    }
    return {
      content,
      reasoning: '',
      toolCalls,
      finishReason: toolCalls.length > 0 ? 'tool_calls' : 'stop',
      usage: { promptTokens: 10, completionTokens: words.length, totalTokens: 10 + words.length },
    };
  }
}
