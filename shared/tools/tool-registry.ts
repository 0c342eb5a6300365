// The tools a model may call during a chat turn: each is defined once with a zod schema for its arguments,
// which gives both the JSON schema the model sees and the validation of what it sends.
import type { MemoryScope } from '../conversation/memory-scope.js';
import { z } from 'zod';

import type { TurnBranch } from '../conversation/branches.js';
import { ensureError } from '../errors.js';
import type { KnowledgeSource } from '../conversation/sources.js';
import type { ToolCall, ToolSpec } from '../llm/llm-gateway.js';
import { genAiSpanName, toolAttributes } from '../telemetry/gen-ai.js';
import { SpanStatusCode, withSpan } from '../telemetry/spans.js';

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_RESULT_CHARS = 16_000;

export interface ToolContext {
  userId: string;
  sessionId: string;
  chatMessageId: string;
  /** False: the turn was posted with use_memory false, and memory tools refuse. Absent means true. */
  useMemory?: boolean;
  /** The memory scopes the turn reads (memory-scope.ts); absent: the user's shared memory only. */
  memoryScopes?: readonly MemoryScope[];
  /** Aborted when the turn is cancelled or the tool runs out of time. */
  signal?: AbortSignal;
  /**
   * The turn's place in the conversation's tree: the past-answer tools answer from its path only (its gaps are
   * other branches' turns). Absent: the main line, every earlier turn.
   */
  branch?: Pick<TurnBranch, 'gaps'>;
  /** The documents the conversation's assistant and project name: knowledge search reads only these. */
  documentIds?: readonly string[];
  /**
   * Reads the documents its assistant and project name as they are now, in place of `documentIds` (a project's
   * documents change after its conversations begin): given to a turn of a conversation filed in a project.
   */
  currentDocumentIds?: () => Promise<readonly string[] | undefined>;
}

export interface ToolDefinition<A = unknown> {
  /** Letters, digits, `_` and `-`; at most 64 characters. */
  name: string;
  description: string;
  arguments: z.ZodType<A>;
  /** It reads the user's long-term memory: left out of a use_memory false turn. */
  memory?: boolean;
  /**
   * The result: a string is given to the model as it is, anything else as JSON; `cited(value, sources)` gives the
   * model `value` and the turn its sources.
   */
  run(args: A, context: ToolContext): Promise<unknown>;
}

/** A tool's result with the knowledge-base chunks it found: the model reads `value`, the turn keeps `sources`. */
export class CitedResult {
  constructor(
    readonly value: unknown,
    readonly sources: readonly KnowledgeSource[],
  ) {}
}

export function cited(value: unknown, sources: readonly KnowledgeSource[]): CitedResult {
  return new CitedResult(value, sources);
}

/** Checks the definition (the name must be one every model API accepts) and returns it. */
export function defineTool<A>(definition: ToolDefinition<A>): ToolDefinition<A> {
  if (!TOOL_NAME.test(definition.name)) {
    throw new Error(`Tool name "${definition.name}" must match ${String(TOOL_NAME)}.`);
  }
  return definition;
}

export interface ToolOutcome {
  /** What the model is given; for an error, JSON `{"error": "..."}`. */
  result: string;
  isError: boolean;
  /** The knowledge-base chunks a `cited` result named; absent when there are none (and on every error). */
  sources?: KnowledgeSource[];
}

export interface ToolRegistryOptions {
  /** A run that takes longer fails (default 30 s); its signal is aborted. */
  timeoutMs?: number;
  /** Longer results are cut, with a marker saying so (default 16000). */
  maxResultChars?: number;
  /** Puts each call's arguments and result on its span (the GenAI content capture opt-in; default off). */
  captureContent?: boolean;
}

export class ToolRegistry {
  private readonly tools = new Map<string, ToolDefinition>();
  private readonly toolSpecs: { spec: ToolSpec; memory: boolean }[];
  private readonly timeoutMs: number;
  private readonly maxResultChars: number;
  private readonly captureContent: boolean;

  constructor(tools: readonly ToolDefinition[], options: ToolRegistryOptions = {}) {
    for (const tool of tools) {
      if (this.tools.has(tool.name)) throw new Error(`Tool "${tool.name}" is defined twice.`);
      this.tools.set(tool.name, defineTool(tool));
    }
    this.toolSpecs = tools.map((tool) => ({ spec: toSpec(tool), memory: tool.memory === true }));
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxResultChars = options.maxResultChars ?? DEFAULT_MAX_RESULT_CHARS;
    this.captureContent = options.captureContent === true;
  }

  /**
   * The tools offered to the model; without the memory tools when the turn may not use memory, and only those
   * `only` names when given (a conversation's assistant names its tools).
   */
  specs(options: { useMemory?: boolean; only?: readonly string[] } = {}): ToolSpec[] {
    return this.toolSpecs
      .filter(({ memory }) => !memory || options.useMemory !== false)
      .filter(({ spec }) => options.only === undefined || options.only.includes(spec.name))
      .map(({ spec }) => ({ ...spec }));
  }

  has(name: string): boolean {
    return this.tools.has(name);
  }

  /**
   * A registry of the same tools, in the same order and under the same options, with `tool` in place of the one of
   * its name (which must be there): one tool served otherwise, the others as they are.
   */
  replace(tool: ToolDefinition): ToolRegistry {
    if (!this.tools.has(tool.name)) throw new Error(`Tool "${tool.name}" is not in the registry.`);
    const tools = [...this.tools.values()].map((one) => (one.name === tool.name ? tool : one));
    return new ToolRegistry(tools, {
      timeoutMs: this.timeoutMs,
      maxResultChars: this.maxResultChars,
      captureContent: this.captureContent,
    });
  }

  /** One `execute_tool {name}` span per call; a call the registry refuses or a tool that fails marks it failed. */
  execute(call: ToolCall, context: ToolContext): Promise<ToolOutcome> {
    // An unknown name is the model's invention: kept out of the span's name, which must stay a small set.
    const known = this.tools.has(call.name);
    return withSpan(
      genAiSpanName('execute_tool', known ? call.name : undefined),
      { attributes: toolAttributes({ name: known ? call.name : 'unknown', callId: call.id }) },
      async (span) => {
        const outcome = await this.run(call, context);
        if (this.captureContent)
          span.setAttributes({
            'gen_ai.tool.call.arguments': call.arguments,
            'gen_ai.tool.call.result': outcome.result,
          });
        if (outcome.isError) {
          span.setAttribute('error.type', 'tool_error');
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
        return outcome;
      },
    );
  }

  private async run(call: ToolCall, context: ToolContext): Promise<ToolOutcome> {
    const tool = this.tools.get(call.name);
    if (tool === undefined) {
      const available = [...this.tools.keys()].join(', ') || 'none';
      return this.failure(`Unknown tool "${call.name}". Available tools: ${available}.`);
    }
    if (tool.memory === true && context.useMemory === false)
      return this.failure(
        `Tool ${tool.name} is not available in this turn: the user asked not to use their long-term memory ` +
          '(use_memory false). Answer without it.',
      );
    const parsed = parseArguments(tool, call.arguments);
    if (!parsed.ok) return this.failure(parsed.message);
    try {
      const value = await runBounded(
        (signal) => tool.run(parsed.value, { ...context, signal }),
        this.timeoutMs,
        context.signal,
      );
      if (!(value instanceof CitedResult)) return { result: this.truncate(render(value)), isError: false };
      return {
        result: this.truncate(render(value.value)),
        isError: false,
        ...(value.sources.length > 0 ? { sources: [...value.sources] } : {}),
      };
    } catch (error) {
      return this.failure(`Tool ${tool.name} failed: ${ensureError(error).message}`);
    }
  }

  private failure(message: string): ToolOutcome {
    return { result: JSON.stringify({ error: this.truncate(message) }), isError: true };
  }

  private truncate(text: string): string {
    if (text.length <= this.maxResultChars) return text;
    const marker = `\n[truncated: the result had ${text.length} characters]`;
    return text.slice(0, Math.max(0, this.maxResultChars - marker.length)) + marker;
  }
}

function toSpec(tool: ToolDefinition): ToolSpec {
  const { $schema: _dialect, ...parameters } = z.toJSONSchema(tool.arguments);
  return { name: tool.name, description: tool.description, parameters };
}

type Parsed = { ok: true; value: unknown } | { ok: false; message: string };

/** Empty arguments mean none (`{}`); a problem is described by argument, so the model can correct itself. */
function parseArguments(tool: ToolDefinition, text: string): Parsed {
  let json: unknown;
  try {
    json = text.trim() === '' ? {} : JSON.parse(text);
  } catch (error) {
    return {
      ok: false,
      message: `The arguments of ${tool.name} are not valid JSON: ${ensureError(error).message}`,
    };
  }
  const result = tool.arguments.safeParse(json);
  if (result.success) return { ok: true, value: result.data };
  const problems = result.error.issues.map(
    (issue) => `${issue.path.length === 0 ? 'arguments' : issue.path.join('.')}: ${issue.message}`,
  );
  return { ok: false, message: `Invalid arguments for ${tool.name}: ${problems.join('; ')}` };
}

/** Runs with a signal that aborts on the caller's signal or after timeoutMs; rejects as soon as it aborts. */
async function runBounded<T>(
  run: (signal: AbortSignal) => Promise<T>,
  timeoutMs: number,
  outer: AbortSignal | undefined,
): Promise<T> {
  const timeout = new AbortController();
  const signal = outer === undefined ? timeout.signal : AbortSignal.any([outer, timeout.signal]);
  let onAbort = (): void => undefined;
  const aborted = new Promise<never>((_resolve, reject) => {
    onAbort = () => reject(ensureError(signal.reason));
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  const timer = setTimeout(
    () => timeout.abort(new Error(`it did not finish within ${timeoutMs} ms`)),
    timeoutMs,
  );
  try {
    return await Promise.race([run(signal), aborted]);
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
  }
}

function render(value: unknown): string {
  if (typeof value === 'string') return value;
  return JSON.stringify(value) ?? 'null';
}
