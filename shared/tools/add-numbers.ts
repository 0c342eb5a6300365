// The add_numbers tool: adds two numbers. The first tool of the chat turn, and the simplest proof that the
// model's tool calls reach code and come back.
import { z } from 'zod';

import { defineTool } from './tool-registry.js';

export const addNumbersTool = defineTool({
  name: 'add_numbers',
  description: 'Adds two numbers and returns their sum.',
  arguments: z.object({
    a: z.number().describe('The first number to add.'),
    b: z.number().describe('The second number to add.'),
  }),
  run({ a, b }) {
    const sum = a + b;
    if (!Number.isFinite(sum)) return Promise.reject(new Error('The sum is too large to represent.'));
    return Promise.resolve({ sum });
  },
});
