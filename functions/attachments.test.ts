// GET /api/attachment-rules in process: a client is told the checks the upload applies, as the settings set them;
// and the usage figures count the bytes a user keeps in attachments.
import { describe, expect, it } from 'vitest';
import { attachmentRulesSchema } from '../shared/attachments/rules.js';
import { asUser, callEndpoint } from '../test/support/call-endpoint.js';
import { createTestApp } from '../test/support/in-memory-ports.js';
import { attachmentRulesEndpoint, uploadAttachmentEndpoint } from './attachments.js';
import { getUsageEndpoint } from './usage.js';

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

describe('GET /api/usage/users/{userId} with attachments', () => {
  it('counts the bytes the caller keeps in attachments, against QUOTA_ATTACHMENT_BYTES', async () => {
    const app = createTestApp({
      settings: { ATTACHMENTS_BLOB_ENDPOINT: 'http://127.0.0.1:1/a', QUOTA_ATTACHMENT_BYTES: '5000' },
    });
    const usage = async (userId: string) => {
      const reply = await callEndpoint(getUsageEndpoint, app, {
        headers: asUser(userId),
        params: { userId },
      });
      expect(reply.status).toBe(200);
      return (await reply.json<{ storage?: unknown }>()).storage;
    };
    expect(await usage('user_001')).toEqual({ attachmentBytes: 0, attachmentQuotaBytes: 5000 });
    const uploaded = await callEndpoint(uploadAttachmentEndpoint, app, {
      method: 'POST',
      headers: asUser('user_001'),
      json: { name: 'notes.txt', contentBase64: Buffer.from('x'.repeat(1234)).toString('base64') },
    });
    expect(uploaded.status).toBe(201);
    expect(await usage('user_001')).toEqual({ attachmentBytes: 1234, attachmentQuotaBytes: 5000 });
    expect(await usage('user_002')).toEqual({ attachmentBytes: 0, attachmentQuotaBytes: 5000 });
  });
});
