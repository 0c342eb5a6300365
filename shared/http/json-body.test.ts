// JSON bodies: nesting is counted as the bytes arrive, outside strings, and a body nested deeper than the limit is
// refused (400, naming the limit) before JSON.parse sees it; bodies within it parse as before.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { asUser, callEndpoint } from '../../test/support/call-endpoint.js';
import type { IdentityResolver } from '../identity/caller.js';
import { createIdentityResolver } from '../identity/identity-resolver.js';
import { defineEndpoint } from './endpoint.js';
import { jsonDepthGuard, MAX_JSON_DEPTH } from './json-body.js';

const app: { identity: IdentityResolver } = { identity: createIdentityResolver({ mode: 'dev' }) };

const echo = defineEndpoint<typeof app>()({
  name: 'echo',
  route: 'echo',
  methods: ['POST'],
  summary: 'Echoes any JSON value.',
  auth: 'caller',
  body: { schema: z.unknown(), maxBytes: 8 * 1024 * 1024, what: 'value' },
  handle: ({ body }) => Promise.resolve({ status: 200, body: { value: body } }),
});

const post = (body: string) =>
  callEndpoint(echo, app, { headers: asUser('user_001', { 'content-type': 'application/json' }), body });

describe('JSON nesting limit', () => {
  it('refuses 6 MB of "[" with the depth check, not after parsing it', async () => {
    const reply = await post('['.repeat(3_000_000) + ']'.repeat(3_000_000));
    expect(reply.status).toBe(400);
    expect(reply.headers.get('content-type')).toBe('application/problem+json');
    expect(await reply.json()).toMatchObject({
      detail: `The request body is nested deeper than ${MAX_JSON_DEPTH} levels of arrays and objects.`,
    });
  }, 60_000);

  it('takes a body nested exactly to the limit', async () => {
    const deep = '['.repeat(MAX_JSON_DEPTH) + ']'.repeat(MAX_JSON_DEPTH);
    const reply = await post(deep);
    expect(reply.status).toBe(200);
    expect(await reply.json()).toEqual({ value: JSON.parse(deep) as unknown });
  });

  it('does not count brackets inside strings, escaped quotes included', async () => {
    const value = { text: '[[[{{{ \\" [[[ "'.repeat(100), list: [1, [2, [3]]] };
    const reply = await post(JSON.stringify(value));
    expect(reply.status).toBe(200);
    expect(await reply.json()).toEqual({ value });
  });

  it('keeps its count across chunks cut anywhere', () => {
    const bytes = new TextEncoder().encode(`{"a":"\\"[[[[","b":${'['.repeat(5)}${']'.repeat(5)}}`);
    const guard = jsonDepthGuard(6);
    for (let i = 0; i < bytes.length; i += 1) guard(bytes.subarray(i, i + 1));
    const tight = jsonDepthGuard(5);
    expect(() => {
      for (let i = 0; i < bytes.length; i += 2) tight(bytes.subarray(i, i + 2));
    }).toThrow(/nested deeper than 5/);
  });
});
