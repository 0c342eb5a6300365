// What every declared endpoint gets from httpHandler, whatever it does: the caller resolved (or not, when
// anonymous), any userId in path, query or body held to the caller, parts parsed by their schemas, errors as
// problem+json that hide what is internal, and no-store on JSON answers.
import azureFunctions from '@azure/functions';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { asUser, callEndpoint } from '../../test/support/call-endpoint.js';
import { ConflictError, UnauthenticatedError } from '../errors.js';
import type { IdentityResolver } from '../identity/caller.js';
import { createIdentityResolver } from '../identity/identity-resolver.js';
import { defineEndpoint, httpHandler } from './endpoint.js';

const { HttpRequest, InvocationContext } = azureFunctions;

interface ProbeApp {
  identity: IdentityResolver;
  calls: unknown[];
}
const endpoint = defineEndpoint<ProbeApp>();
const app = (): ProbeApp => ({ identity: createIdentityResolver({ mode: 'dev' }), calls: [] });

const echo = endpoint({
  name: 'echo',
  route: 'users/{userId}/things/{thingId}',
  methods: ['POST'],
  summary: 'Echoes what it parsed.',
  auth: 'caller',
  params: z.object({ userId: z.string(), thingId: z.coerce.number().int() }),
  query: z.object({ limit: z.coerce.number().int().max(50).default(10) }),
  body: {
    schema: z.object({ note: z.string(), userId: z.string().optional() }),
    maxBytes: 64,
    what: 'thing',
  },
  handle({ app: probe, caller, params, query, body }) {
    probe.calls.push({ caller: caller.userId, params, query, body });
    if (body.note === 'conflict') return Promise.reject(new ConflictError('That thing changed meanwhile.'));
    if (body.note === 'crash') return Promise.reject(new Error('secret connection string in this message'));
    return Promise.resolve({ status: 200, body: { params, query, body }, headers: { etag: '"1"' } });
  },
});

const call = (probe: ProbeApp, path: string, json: unknown, user = 'user_001') =>
  callEndpoint(echo, probe, {
    path,
    params: { userId: 'user_001', thingId: path.split('/')[5]?.split('?')[0] ?? '' },
    headers: asUser(user),
    json,
  });

describe('httpHandler', () => {
  it('hands the use-case the parsed parts and answers JSON with no-store and its own headers', async () => {
    const probe = app();
    const reply = await call(probe, '/api/users/user_001/things/7?limit=5', { note: 'hi' });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('cache-control')).toBe('no-store');
    expect(reply.headers.get('etag')).toBe('"1"');
    expect(await reply.json()).toEqual({
      params: { userId: 'user_001', thingId: 7 },
      query: { limit: 5 },
      body: { note: 'hi' },
    });
  });

  it("refuses a userId that is not the caller's in the path, the query or the body, before any work", async () => {
    const probe = app();
    const inPath = await callEndpoint(echo, probe, {
      params: { userId: 'user_002', thingId: '1' },
      headers: asUser('user_001'),
      json: { note: 'x' },
    });
    expect(inPath.status).toBe(403);
    expect((await call(probe, '/api/users/user_001/things/1?userId=user_002', { note: 'x' })).status).toBe(
      403,
    );
    expect(
      (await call(probe, '/api/users/user_001/things/1', { note: 'x', userId: 'user_002' })).status,
    ).toBe(403);
    expect(probe.calls).toEqual([]);
  });

  it('refuses a query parameter given twice, so no check reads one value and the parser another', async () => {
    const probe = app();
    for (const query of ['?userId=user_001&userId=user_002', '?limit=5&limit=6']) {
      const reply = await call(probe, `/api/users/user_001/things/1${query}`, { note: 'x' });
      expect(reply.status, query).toBe(400);
      expect(await reply.json()).toMatchObject({ detail: expect.stringMatching(/given more than once/) });
    }
    expect(probe.calls).toEqual([]);
  });

  it('names every part that fails its schema (400), and the body limit (413)', async () => {
    const probe = app();
    const bad = await call(probe, '/api/users/user_001/things/x?limit=500', { note: 1 });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ errors: [{ path: 'thingId' }] });
    const badQuery = await call(probe, '/api/users/user_001/things/1?limit=500', { note: 'x' });
    expect(await badQuery.json()).toMatchObject({
      status: 400,
      detail: expect.stringMatching(/^Invalid query: limit/),
    });
    const badBody = await call(probe, '/api/users/user_001/things/1', { note: 1 });
    expect(await badBody.json()).toMatchObject({
      status: 400,
      detail: expect.stringMatching(/^Invalid thing: note/),
    });
    const big = await call(probe, '/api/users/user_001/things/1', { note: 'x'.repeat(100) });
    expect(big.status).toBe(413);
    expect(probe.calls).toEqual([]);
  });

  it('maps known errors to their status and hides unknown ones behind a 500 it logs', async () => {
    const probe = app();
    const conflict = await call(probe, '/api/users/user_001/things/1', { note: 'conflict' });
    expect(conflict.status).toBe(409);
    expect(await conflict.json()).toMatchObject({
      code: 'conflict',
      detail: 'That thing changed meanwhile.',
    });
    const crash = await call(probe, '/api/users/user_001/things/1', { note: 'crash' });
    expect(crash.status).toBe(500);
    const text = await crash.text();
    expect(text).not.toMatch(/secret/);
    expect(JSON.parse(text)).toMatchObject({
      code: 'internal_error',
      instance: expect.stringMatching(/things\/1$/),
    });
    expect(String(crash.logged[0])).toMatch(/secret connection string/);
  });

  it('calls an anonymous endpoint without an identity, and never resolves one for it', async () => {
    let resolved = 0;
    const probe: ProbeApp = {
      identity: {
        resolve: () => Promise.resolve({ userId: 'x', identityProvider: 'dev' }).finally(() => resolved++),
      },
      calls: [],
    };
    const open = endpoint({
      name: 'open',
      route: 'open',
      methods: ['GET'],
      summary: 'Anyone may call.',
      auth: 'anonymous',
      handle({ caller }) {
        return Promise.resolve({ status: 200, body: { caller: caller ?? null } });
      },
    });
    const handler = httpHandler(open, () => Promise.resolve(probe));
    const response = await handler(
      new HttpRequest({ method: 'GET', url: 'http://localhost/api/open' }),
      new InvocationContext({ invocationId: '1', functionName: 'open' }),
    );
    expect(response).toMatchObject({ status: 200, jsonBody: { caller: null } });
    expect(resolved).toBe(0);
  });

  it("takes a ticket in the query instead of identity headers with auth 'caller-or-ticket'", async () => {
    const redeemed: unknown[] = [];
    const ticketed = endpoint({
      name: 'ticketed',
      route: 'things/{thingId}',
      methods: ['GET'],
      summary: 'A caller, or the bearer of a ticket for this thing.',
      auth: 'caller-or-ticket',
      ticket: {
        queryParameter: 'ticket',
        redeem({ ticket, params }) {
          redeemed.push({ ticket, params });
          if (ticket !== `for-${params.thingId}`)
            return Promise.reject(new UnauthenticatedError('Bad ticket.'));
          return Promise.resolve({ userId: 'user_003', identityProvider: 'stream-ticket' });
        },
      },
      params: z.object({ thingId: z.coerce.number().int() }),
      handle({ caller }) {
        return Promise.resolve({
          status: 200,
          body: { caller: caller.userId, via: caller.identityProvider },
        });
      },
    });
    const get = (path: string, headers: Record<string, string> = {}) =>
      callEndpoint(ticketed, app(), { path, params: { thingId: '7' }, headers });

    // The ticket is redeemed with the parsed path, and wins over identity headers.
    const byTicket = await get('/api/things/7?ticket=for-7', asUser('user_001'));
    expect(await byTicket.json()).toEqual({ caller: 'user_003', via: 'stream-ticket' });
    expect(redeemed).toEqual([{ ticket: 'for-7', params: { thingId: 7 } }]);
    expect((await get('/api/things/7?ticket=for-8')).status).toBe(401);
    // A ticket's caller is held to a userId the query names, like any caller.
    expect((await get('/api/things/7?ticket=for-7&userId=user_001')).status).toBe(403);
    // Without a ticket (or with an empty one), the identity headers as usual.
    expect(await (await get('/api/things/7', asUser('user_001'))).json()).toEqual({
      caller: 'user_001',
      via: 'dev',
    });
    expect((await get('/api/things/7?ticket=')).status).toBe(401);

    // Declaring the mode without saying how to redeem tickets fails when the handler is made, not per request.
    const { ticket: _ticket, ...unticketed } = ticketed;
    expect(() => httpHandler(unticketed, () => Promise.resolve(app()))).toThrow(/needs a `ticket`/);
  });
  it('answers a text result as it is, with its own content-type and headers, and no-store', async () => {
    const text = endpoint({
      name: 'text',
      route: 'text',
      methods: ['GET'],
      summary: 'Answers Markdown.',
      auth: 'caller',
      handle() {
        return Promise.resolve({
          status: 200,
          text: '# Title\n\nNot JSON: "quoted"\n',
          headers: {
            'content-type': 'text/markdown; charset=utf-8',
            'content-disposition': 'attachment; filename="title.md"',
          },
        });
      },
    });
    const reply = await callEndpoint(text, app(), { headers: asUser('user_001') });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
    expect(reply.headers.get('content-disposition')).toBe('attachment; filename="title.md"');
    expect(reply.headers.get('cache-control')).toBe('no-store');
    expect(await reply.text()).toBe('# Title\n\nNot JSON: "quoted"\n');
  });
});
