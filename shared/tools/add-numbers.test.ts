import { describe, expect, it } from 'vitest';

import { MemoryConversationMessages, MemorySessionMemory } from '../../test/support/in-memory-history.js';
import { MemoryWorkingMemory } from '../../test/support/in-memory-ports.js';
import { addNumbersTool } from './add-numbers.js';
import { createChatTools } from './index.js';
import { ToolRegistry } from './tool-registry.js';

const context = { userId: 'user-1', sessionId: 'session-1', chatMessageId: 'chat-1' };
const registry = new ToolRegistry([addNumbersTool]);

function add(args: string) {
  return registry.execute({ id: 'call-1', name: 'add_numbers', arguments: args }, context);
}

describe('add_numbers', () => {
  it('returns the sum of two numbers', async () => {
    expect(await add('{"a": 2, "b": 3}')).toEqual({ result: '{"sum":5}', isError: false });
    expect(await add('{"a": -1.5, "b": 0.25}')).toEqual({ result: '{"sum":-1.25}', isError: false });
  });

  it('is described to the model with two required numbers', () => {
    expect(registry.specs()).toEqual([
      {
        name: 'add_numbers',
        description: 'Adds two numbers and returns their sum.',
        parameters: {
          type: 'object',
          properties: {
            a: { type: 'number', description: expect.any(String) },
            b: { type: 'number', description: expect.any(String) },
          },
          required: ['a', 'b'],
          additionalProperties: false,
        },
      },
    ]);
  });

  it('refuses arguments that are missing or not numbers', async () => {
    const missing = await add('{"a": 1}');
    expect(missing.isError).toBe(true);
    expect(missing.result).toMatch(/b: Invalid input: expected number/);
    expect((await add('{"a": "1", "b": 2}')).result).toMatch(/a: Invalid input: expected number/);
  });

  it('refuses a sum too large to represent', async () => {
    const outcome = await add('{"a": 1e308, "b": 1e308}');
    expect(outcome.isError).toBe(true);
    expect(outcome.result).toMatch(/too large/);
  });

  it('is one of the chat tools', () => {
    const messages = new MemoryConversationMessages();
    const deps = {
      messages,
      sessionMemory: new MemorySessionMemory(messages),
      workingMemory: new MemoryWorkingMemory(),
      searchConversations: () => Promise.resolve([]),
      searchKnowledge: () => Promise.resolve([]),
    };
    expect(createChatTools(deps).has('add_numbers')).toBe(true);
  });
});
