// GET /api/models: the chat models of the catalogue the caller may choose for a conversation or a message.
import { z } from 'zod';
import { describeModel, modelsFor } from '../shared/models/model-catalogue.js';
import type { FunctionDefinition } from './definition.js';
import { endpoint, httpFunction } from './endpoint.js';

const modelListSchema = z.object({
  models: z.array(
    z.object({
      id: z.string(),
      label: z.string(),
      capabilities: z.object({ tools: z.boolean(), vision: z.boolean(), reasoning: z.boolean() }),
      contextWindow: z.number().optional(),
      price: z.record(z.string(), z.number().optional()).optional(),
      default: z.boolean(),
    }),
  ),
  defaultModel: z.string(),
});

export const listModelsEndpoint = endpoint({
  name: 'listModels',
  route: 'models',
  methods: ['GET'],
  summary:
    'The chat models the caller may choose (LLM_MODELS): id, label, capabilities (tools, vision, reasoning), context window, price, and which is the default.',
  auth: 'caller',
  responses: { 200: '{models: [{id, label, capabilities, contextWindow?, price?, default}], defaultModel}' },
  replies: { 200: modelListSchema },
  handle({ app, caller }) {
    const catalogue = app.config.models;
    return Promise.resolve({
      status: 200,
      body: {
        models: modelsFor(catalogue, caller).map((entry) => describeModel(entry, catalogue.defaultModel)),
        defaultModel: catalogue.defaultModel,
      },
    });
  },
});

export const modelFunctions: FunctionDefinition[] = [httpFunction(listModelsEndpoint)];
