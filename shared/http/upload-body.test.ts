// Upload bodies: a form's fields and file reach the endpoint's mapper under the same byte limit (413 past it); a
// malformed form is a 400, another media type a 415, JSON-only endpoints stay so; and a form with too many parts,
// header lines or header bytes is refused while it is read, before it is parsed.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { asUser, callEndpoint } from '../../test/support/call-endpoint.js';
import type { IdentityResolver } from '../identity/caller.js';
import { createIdentityResolver } from '../identity/identity-resolver.js';
import { defineEndpoint } from './endpoint.js';
import { formFile, formText, MULTIPART_LIMITS, multipartGuard } from './upload-body.js';

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

const BOUNDARY = 'form-boundary-7MA4YWxk';

/** A multipart body written by hand, so a part can carry what no well-behaved client sends. */
function rawForm(parts: { headers: string[]; content: string }[]): string {
  const body = parts.map(
    (part) => `--${BOUNDARY}\r\n${part.headers.join('\r\n')}\r\n\r\n${part.content}\r\n`,
  );
  return `${body.join('')}--${BOUNDARY}--\r\n`;
}

const fileHeaders = [
  'Content-Disposition: form-data; name="file"; filename="notes.md"',
  'Content-Type: text/markdown',
];

async function postRaw(body: string, maxBytes = 1_024) {
  const endpointWithLimit = { ...upload, body: { ...upload.body!, maxBytes } };
  return callEndpoint(endpointWithLimit, app, {
    headers: asUser('user_001', { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }),
    body,
  });
}

describe('multipart limits, enforced while the form is read', () => {
  it('takes a hand-written form within the limits', async () => {
    const reply = await postRaw(rawForm([{ headers: fileHeaders, content: '# Notes' }]));
    expect(reply.status).toBe(200);
    expect(await reply.json()).toEqual({ fileName: 'notes.md', contentType: 'text/markdown', size: 7 });
  });

  it('refuses a part with 5,000 header lines (400), naming the limit', async () => {
    const headers = [...fileHeaders, ...Array.from({ length: 5_000 }, (_, i) => `X-Filler-${i}: x`)];
    const reply = await postRaw(rawForm([{ headers, content: '# Notes' }]), 1_000_000);
    expect(reply.status).toBe(400);
    expect(reply.headers.get('content-type')).toBe('application/problem+json');
    expect(await reply.json()).toMatchObject({
      detail: `The multipart/form-data body has a part with more than ${MULTIPART_LIMITS.maxHeaderLines} header lines.`,
    });
  });

  it('refuses a part whose headers are larger than the limit, even on few lines', async () => {
    const headers = [...fileHeaders, `X-Long: ${'x'.repeat(MULTIPART_LIMITS.maxHeaderBytes)}`];
    const reply = await postRaw(rawForm([{ headers, content: '# Notes' }]), 1_000_000);
    expect(reply.status).toBe(400);
    expect(await reply.json()).toMatchObject({ detail: expect.stringMatching(/headers are larger than/) });
  });

  it('refuses a form with more parts than the limit', async () => {
    const parts = Array.from({ length: MULTIPART_LIMITS.maxParts + 1 }, (_, i) => ({
      headers: [`Content-Disposition: form-data; name="field${i}"`],
      content: 'x',
    }));
    const reply = await postRaw(rawForm(parts), 1_000_000);
    expect(reply.status).toBe(400);
    expect(await reply.json()).toMatchObject({ detail: expect.stringMatching(/more than 16 parts/) });
  });

  it('refuses a malformed boundary parameter', async () => {
    const reply = await callEndpoint(upload, app, {
      headers: asUser('user_001', { 'content-type': 'multipart/form-data; boundary=' + 'b'.repeat(71) }),
      body: 'x',
    });
    expect(reply.status).toBe(400);
  });

  it('follows the form across chunks cut anywhere, even one byte at a time', () => {
    const bytes = new TextEncoder().encode(
      rawForm([
        { headers: fileHeaders, content: `line\r\n--${BOUNDARY.slice(0, 5)} not a delimiter\r\n` },
        { headers: ['Content-Disposition: form-data; name="title"'], content: '' },
      ]),
    );
    const guard = multipartGuard(BOUNDARY);
    for (let i = 0; i < bytes.length; i += 1) guard(bytes.subarray(i, i + 1));
    const tight = multipartGuard(BOUNDARY, { maxParts: 1, maxHeaderLines: 8, maxHeaderBytes: 4_096 });
    expect(() => {
      for (let i = 0; i < bytes.length; i += 3) tight(bytes.subarray(i, i + 3));
    }).toThrow(/more than 1 parts/);
  });
});
