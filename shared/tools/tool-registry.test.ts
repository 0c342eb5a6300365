import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';

import type { KnowledgeSource } from '../conversation/sources.js';
import { cited, defineTool, ToolRegistry, type ToolContext } from './tool-registry.js';

const context: ToolContext = { userId: 'user-1', sessionId: 'session-1', chatMessageId: 'chat-1' };

const echoTool = defineTool({
  name: 'echo',
  description: 'Returns its text.',
  arguments: z.object({ text: z.string().max(10), times: z.number().int().optional() }),
  run: ({ text, times }) => Promise.resolve(text.repeat(times ?? 1)),
});

const noArgumentsTool = defineTool({
  name: 'clock',
  description: 'Says what it was given.',
  arguments: z.object({}),
  run: (_args, { userId }) => Promise.resolve({ userId, items: [1, 2] }),
});

function call(name: string, args: string) {
  return { id: 'call-1', name, arguments: args };
}

function errorOf(result: string): string {
  return (JSON.parse(result) as { error: string }).error;
}

afterEach(() => {
  vi.useRealTimers();
});

describe('defineTool', () => {
  it.each(['', 'has space', 'dot.name', 'x'.repeat(65)])('refuses the name %j', (name) => {
    expect(() => defineTool({ ...echoTool, name })).toThrow(/must match/);
  });

  it('accepts letters, digits, _ and - up to 64 characters', () => {
    expect(defineTool({ ...echoTool, name: `a-b_9${'x'.repeat(59)}` }).name).toHaveLength(64);
  });
});

describe('ToolRegistry', () => {
  it('refuses two tools of the same name', () => {
    expect(() => new ToolRegistry([echoTool, { ...noArgumentsTool, name: 'echo' }])).toThrow(/defined twice/);
  });

  it('replaces one tool by name, keeping the others, their order and the options', async () => {
    const registry = new ToolRegistry([echoTool, noArgumentsTool], { maxResultChars: 50 });
    const loud = defineTool({
      ...echoTool,
      run: ({ text }) => Promise.resolve(text.toUpperCase().repeat(40)),
    });
    const replaced = registry.replace(loud);
    expect(replaced.specs().map((spec) => spec.name)).toEqual(['echo', 'clock']);
    expect((await replaced.execute(call('echo', '{"text":"ab"}'), context)).result).toBe(
      'ABABABAB\n[truncated: the result had 80 characters]',
    );
    expect(await replaced.execute(call('clock', ''), context)).toMatchObject({ isError: false });
    expect(await registry.execute(call('echo', '{"text":"ab"}'), context)).toEqual({
      result: 'ab',
      isError: false,
    });
    expect(() => registry.replace({ ...echoTool, name: 'missing' })).toThrow(/not in the registry/);
  });

  it('describes each tool with the JSON schema of its arguments', () => {
    const registry = new ToolRegistry([echoTool, noArgumentsTool]);
    const [echo, clock] = registry.specs();
    expect(echo).toEqual({
      name: 'echo',
      description: 'Returns its text.',
      parameters: {
        type: 'object',
        properties: {
          text: { type: 'string', maxLength: 10 },
          times: expect.objectContaining({ type: 'integer' }),
        },
        required: ['text'],
        additionalProperties: false,
      },
    });
    expect(clock?.name).toBe('clock');
    expect(registry.has('echo')).toBe(true);
    expect(registry.has('missing')).toBe(false);
  });

  it('runs a tool with its validated arguments and gives strings as they are, other values as JSON', async () => {
    const registry = new ToolRegistry([echoTool, noArgumentsTool]);
    expect(await registry.execute(call('echo', '{"text":"ab","times":2}'), context)).toEqual({
      result: 'abab',
      isError: false,
    });
    expect(await registry.execute(call('clock', '{}'), context)).toEqual({
      result: '{"userId":"user-1","items":[1,2]}',
      isError: false,
    });
  });

  it('treats empty arguments as no arguments', async () => {
    const registry = new ToolRegistry([noArgumentsTool]);
    expect(await registry.execute(call('clock', ''), context)).toMatchObject({ isError: false });
  });

  it('answers an unknown tool with an error that names the available tools', async () => {
    const registry = new ToolRegistry([echoTool, noArgumentsTool]);
    const outcome = await registry.execute(call('search_web', '{}'), context);
    expect(outcome.isError).toBe(true);
    expect(errorOf(outcome.result)).toBe('Unknown tool "search_web". Available tools: echo, clock.');
  });

  it('answers arguments that are not JSON with an error', async () => {
    const registry = new ToolRegistry([echoTool]);
    const outcome = await registry.execute(call('echo', '{"text": "a"'), context);
    expect(outcome.isError).toBe(true);
    expect(errorOf(outcome.result)).toMatch(/^The arguments of echo are not valid JSON: /);
  });

  it('answers invalid arguments with an error naming each wrong argument', async () => {
    const run = vi.fn(() => Promise.resolve('never'));
    const registry = new ToolRegistry([{ ...echoTool, run }]);
    const outcome = await registry.execute(call('echo', '{"text": 5, "times": 1.5}'), context);
    expect(outcome.isError).toBe(true);
    const message = errorOf(outcome.result);
    expect(message).toMatch(/^Invalid arguments for echo: /);
    expect(message).toMatch(/text: Invalid input: expected string, received number/);
    expect(message).toMatch(/times: Invalid input: expected int, received number/);
    expect(run).not.toHaveBeenCalled();

    const notAnObject = await registry.execute(call('echo', '[1]'), context);
    expect(errorOf(notAnObject.result)).toMatch(/arguments: Invalid input: expected object, received array/);
  });

  it('answers a tool that throws with an error carrying its message', async () => {
    const failing = defineTool({
      ...noArgumentsTool,
      run: () => Promise.reject(new Error('the index is offline')),
    });
    const outcome = await new ToolRegistry([failing]).execute(call('clock', '{}'), context);
    expect(outcome).toEqual({
      result: JSON.stringify({ error: 'Tool clock failed: the index is offline' }),
      isError: true,
    });
  });

  it('answers a tool that runs past the timeout with an error, and aborts its signal', async () => {
    vi.useFakeTimers();
    let seen: AbortSignal | undefined;
    const slow = defineTool({
      ...noArgumentsTool,
      run: (_args, { signal }) => {
        seen = signal;
        return new Promise(() => undefined);
      },
    });
    const pending = new ToolRegistry([slow], { timeoutMs: 1000 }).execute(call('clock', '{}'), context);
    await vi.advanceTimersByTimeAsync(999);
    expect(seen?.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const outcome = await pending;
    expect(outcome.isError).toBe(true);
    expect(errorOf(outcome.result)).toBe('Tool clock failed: it did not finish within 1000 ms');
    expect(seen?.aborted).toBe(true);
  });

  it("stops waiting when the caller's signal aborts", async () => {
    const controller = new AbortController();
    const hanging = defineTool({ ...noArgumentsTool, run: () => new Promise(() => undefined) });
    const pending = new ToolRegistry([hanging]).execute(call('clock', '{}'), {
      ...context,
      signal: controller.signal,
    });
    controller.abort(new Error('the turn was cancelled'));
    expect(await pending).toEqual({
      result: JSON.stringify({ error: 'Tool clock failed: the turn was cancelled' }),
      isError: true,
    });
  });

  it('cuts a long result to maxResultChars with a marker', async () => {
    const long = defineTool({ ...noArgumentsTool, run: () => Promise.resolve('x'.repeat(500)) });
    const outcome = await new ToolRegistry([long], { maxResultChars: 100 }).execute(
      call('clock', ''),
      context,
    );
    expect(outcome.isError).toBe(false);
    expect(outcome.result).toHaveLength(100);
    expect(outcome.result).toMatch(/^x+\n\[truncated: the result had 500 characters\]$/);

    const short = await new ToolRegistry([long], { maxResultChars: 500 }).execute(call('clock', ''), context);
    expect(short.result).toBe('x'.repeat(500));
  });

  it('leaves memory tools out of a use_memory false turn, and refuses a call to one there without running it', async () => {
    const run = vi.fn(() => Promise.resolve('remembered'));
    const recall = defineTool({ ...noArgumentsTool, name: 'recall', memory: true, run });
    const registry = new ToolRegistry([echoTool, recall]);
    expect(registry.specs().map((spec) => spec.name)).toEqual(['echo', 'recall']);
    expect(registry.specs({ useMemory: true }).map((spec) => spec.name)).toEqual(['echo', 'recall']);
    expect(registry.specs({ useMemory: false }).map((spec) => spec.name)).toEqual(['echo']);

    const refused = await registry.execute(call('recall', '{}'), { ...context, useMemory: false });
    expect(refused.isError).toBe(true);
    expect(errorOf(refused.result)).toMatch(/^Tool recall is not available in this turn: .*use_memory false/);
    expect(run).not.toHaveBeenCalled();
    // Other tools run as ever; and the memory tool runs when the turn may use memory.
    expect(await registry.execute(call('echo', '{"text":"a"}'), { ...context, useMemory: false })).toEqual({
      result: 'a',
      isError: false,
    });
    expect(await registry.execute(call('recall', '{}'), context)).toEqual({
      result: 'remembered',
      isError: false,
    });
  });

  it('answers a result that cannot be turned into JSON with an error', async () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const broken = defineTool({ ...noArgumentsTool, run: () => Promise.resolve(circular) });
    const outcome = await new ToolRegistry([broken]).execute(call('clock', ''), context);
    expect(outcome.isError).toBe(true);
    expect(errorOf(outcome.result)).toMatch(/^Tool clock failed: .*circular/i);
  });

  // search_knowledge_base fits its result below the limit; a long cited result (a past answer, say) is cut as any.
  it('gives the model the value of a cited result and keeps its sources beside it, even when the text is cut', async () => {
    const source: KnowledgeSource = {
      chunkId: 'c1',
      documentId: 'a'.repeat(32),
      title: 'Handbook',
      pages: [4],
      citation: 'Handbook, p. 4',
      excerpt: 'Leave is 20 days.',
      score: 0.03,
    };
    const citing = defineTool({
      ...noArgumentsTool,
      run: () => Promise.resolve(cited({ text: 'x'.repeat(500) }, [source])),
    });
    const outcome = await new ToolRegistry([citing], { maxResultChars: 100 }).execute(
      call('clock', ''),
      context,
    );
    expect(outcome.result).toMatch(/^\{"text":"x+\n\[truncated: the result had 511 characters\]$/);
    expect(outcome.sources).toEqual([source]);

    const none = defineTool({ ...noArgumentsTool, run: () => Promise.resolve(cited('nothing found', [])) });
    expect(await new ToolRegistry([none]).execute(call('clock', ''), context)).toEqual({
      result: 'nothing found',
      isError: false,
    });
  });
});
