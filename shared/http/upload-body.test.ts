// Upload bodies: a declared endpoint that takes a form as well as JSON gets the form's fields and file through its
// mapper under the same byte limit (413 past it), a malformed form is a 400, another media type a 415 that names
// both, and an endpoint without a form mapper still takes JSON only.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { asUser, callEndpoint } from '../../test/support/call-endpoint.js';
import type { IdentityResolver } from '../identity/caller.js';
import { createIdentityResolver } from '../identity/identity-resolver.js';
import { defineEndpoint } from './endpoint.js';
import { formFile, formText } from './upload-body.js';

interface ProbeApp {
  identity: IdentityResolver;
}
const app: ProbeApp = { identity: createIdentityResolver({ mode: 'dev' }) };
const endpoint = defineEndpoint<ProbeApp>();

const schema = z.object({
  title: z.string().optional(),
  fileName: z.string().optional(),
  contentType: z.string().optional(),
  size: z.number().int(),
});

const upload = endpoint({
  name: 'upload',
  route: 'upload',
  methods: ['POST'],
  summary: 'Takes a file as JSON or as a form.',
  auth: 'caller',
  body: {
    schema,
    maxBytes: 1_024,
    what: 'upload',
    multipart: async (form) => {
      const file = await formFile(form, 'file');
      return {
        title: formText(form, 'title'),
        fileName: file?.fileName,
        contentType: file?.contentType,
        size: file?.content.byteLength,
      };
    },
  },
  handle: ({ body }) => Promise.resolve({ status: 200, body }),
});

const jsonOnly = endpoint({
  name: 'jsonOnly',
  route: 'json-only',
  methods: ['POST'],
  summary: 'Takes JSON only.',
  auth: 'caller',
  body: { schema, maxBytes: 1_024, what: 'upload' },
  handle: ({ body }) => Promise.resolve({ status: 200, body }),
});

function form(fields: Record<string, string | Blob | [Blob, string]>): FormData {
  const data = new FormData();
  for (const [name, value] of Object.entries(fields))
    if (Array.isArray(value)) data.append(name, value[0], value[1]);
    else data.append(name, value);
  return data;
}

describe('an endpoint that takes uploads', () => {
  it("maps a form's file (its name without a client's path, its type) and text fields", async () => {
    const reply = await callEndpoint(upload, app, {
      headers: asUser('user_001'),
      form: form({
        title: '  Handbook ',
        file: [new Blob(['%PDF-1.7 ...'], { type: 'application/pdf' }), 'C:\\docs\\handbook.pdf'],
      }),
    });
    expect(reply.status).toBe(200);
    expect(await reply.json()).toEqual({
      title: 'Handbook',
      fileName: 'handbook.pdf',
      contentType: 'application/pdf',
      size: 12,
    });
  });

  it('takes a file sent as a text field, without a name or type', async () => {
    const reply = await callEndpoint(upload, app, {
      headers: asUser('user_001'),
      form: form({ file: 'some notes' }),
    });
    expect(await reply.json()).toEqual({ size: 10 });
  });

  it('still takes JSON', async () => {
    const reply = await callEndpoint(upload, app, { headers: asUser('user_001'), json: { size: 3 } });
    expect(await reply.json()).toEqual({ size: 3 });
  });

  it('refuses a form over the limit (413), a malformed form (400) and another media type (415)', async () => {
    const big = await callEndpoint(upload, app, {
      headers: asUser('user_001'),
      form: form({ file: [new Blob([new Uint8Array(2_000)]), 'big.bin'] }),
    });
    expect(big.status).toBe(413);
    const malformed = await callEndpoint(upload, app, {
      headers: asUser('user_001', { 'content-type': 'multipart/form-data; boundary=xyz' }),
      body: 'this is not a form',
    });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ detail: expect.stringMatching(/multipart/) });
    const noBoundary = await callEndpoint(upload, app, {
      headers: asUser('user_001', { 'content-type': 'multipart/form-data' }),
      body: 'x',
    });
    expect(noBoundary.status).toBe(400);
    const other = await callEndpoint(upload, app, {
      headers: asUser('user_001', { 'content-type': 'text/plain' }),
      body: 'hello',
    });
    expect(other.status).toBe(415);
    expect(await other.json()).toMatchObject({ detail: expect.stringMatching(/JSON.*multipart\/form-data/) });
  });

  it('leaves an endpoint without a form mapper to JSON (415 for a form)', async () => {
    const reply = await callEndpoint(jsonOnly, app, {
      headers: asUser('user_001'),
      form: form({ file: 'x' }),
    });
    expect(reply.status).toBe(415);
  });
});
