import { describe, expect, it } from 'vitest';
import { compileRoute, matchRoute } from './route-matcher.js';

const routes = [
  compileRoute('health', ['GET'], 'health'),
  compileRoute('session/start', ['POST'], 'start'),
  compileRoute('stream/{sessionId}/{chatMessageId}', ['GET'], 'stream'),
  compileRoute('history/conversations/{sessionId}/{part?}', ['GET', 'DELETE'], 'conversation'),
  compileRoute('files/{*path}', ['GET'], 'files'),
];

describe('matchRoute', () => {
  it('matches literals case-insensitively, with or without a trailing slash', () => {
    expect(matchRoute(routes, 'GET', '/health')).toEqual({ kind: 'matched', target: 'health', params: {} });
    expect(matchRoute(routes, 'post', '/Session/Start/')).toMatchObject({ kind: 'matched', target: 'start' });
  });

  it('binds one segment per parameter and decodes it', () => {
    expect(matchRoute(routes, 'GET', '/stream/s%201/m-2')).toEqual({
      kind: 'matched',
      target: 'stream',
      params: { sessionId: 's 1', chatMessageId: 'm-2' },
    });
    expect(matchRoute(routes, 'GET', '/stream/s1')).toEqual({ kind: 'not-found' });
    expect(matchRoute(routes, 'GET', '/stream/s1/m/extra')).toEqual({ kind: 'not-found' });
  });

  it('supports optional and catch-all parameters', () => {
    expect(matchRoute(routes, 'GET', '/history/conversations/abc')).toEqual({
      kind: 'matched',
      target: 'conversation',
      params: { sessionId: 'abc' },
    });
    expect(matchRoute(routes, 'DELETE', '/history/conversations/abc/title')).toMatchObject({
      params: { sessionId: 'abc', part: 'title' },
    });
    expect(matchRoute(routes, 'GET', '/files/a/b/c.txt')).toMatchObject({ params: { path: 'a/b/c.txt' } });
  });

  it('tells a wrong method from an unknown path', () => {
    expect(matchRoute(routes, 'GET', '/session/start')).toEqual({
      kind: 'method-not-allowed',
      allowed: ['POST'],
    });
    expect(matchRoute(routes, 'GET', '/nope')).toEqual({ kind: 'not-found' });
  });
});
