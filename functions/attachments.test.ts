// GET /api/attachment-rules in process: a client is told the checks the upload applies, as the settings set them.
import { describe, expect, it } from 'vitest';
import { attachmentRulesSchema } from '../shared/attachments/rules.js';
import { asUser, callEndpoint } from '../test/support/call-endpoint.js';
import { createTestApp } from '../test/support/in-memory-ports.js';
import { attachmentRulesEndpoint } from './attachments.js';

describe('GET /api/attachment-rules', () => {
  it('says the types, sizes and counts the settings give, and that images do not reach a model without vision', async () => {
    const app = createTestApp({
      settings: {
        ATTACHMENTS_TYPES: 'image/png, Text/Plain',
        ATTACHMENTS_MAX_FILE_BYTES: '1000',
        ATTACHMENTS_MAX_PER_MESSAGE: '3',
        ATTACHMENTS_MAX_MESSAGE_BYTES: '2500',
        LLM_VISION: 'off',
      },
    });
    const reply = await callEndpoint(attachmentRulesEndpoint, app, { headers: asUser('user_001') });
    expect(reply.status).toBe(200);
    const rules = attachmentRulesSchema.parse(await reply.json());
    expect(rules).toMatchObject({
      types: ['image/png', 'text/plain'],
      maxFileBytes: 1000,
      maxPerMessage: 3,
      maxMessageBytes: 2500,
      vision: false,
    });
    expect(rules.enabled).toBe(app.config.attachments.blob !== undefined);
  });

  it('asks who is calling', async () => {
    const reply = await callEndpoint(attachmentRulesEndpoint, createTestApp());
    expect(reply.status).toBe(401);
  });
});
