import { describe, expect, it } from 'vitest';
import { RestRoutes } from './rest-routes.js';

const routes = new RestRoutes([
  { method: 'POST', template: 'hubs/{hub}/users/{userId}/:send', target: 'sendToUser' },
  { method: 'HEAD', template: 'hubs/{hub}/groups/{group}', target: 'groupExists' },
]);

describe('RestRoutes', () => {
  it('matches literal action segments and decodes parameters', () => {
    expect(routes.match('POST', 'hubs/chat/users/a%2Fb%20c/:send')).toEqual({
      kind: 'matched',
      target: 'sendToUser',
      params: { hub: 'chat', userId: 'a/b c' },
    });
  });

  it('tells a wrong method from an unknown path, and refuses broken encoding', () => {
    expect(routes.match('GET', 'hubs/chat/groups/g')).toEqual({
      kind: 'method-not-allowed',
      allowed: ['HEAD'],
    });
    expect(routes.match('POST', 'hubs/chat/users/u/:shout')).toEqual({ kind: 'not-found' });
    expect(routes.match('HEAD', 'hubs/chat/groups/%E0%A4%A')).toEqual({ kind: 'bad-encoding' });
  });
});
