import { describe, expect, it } from 'vitest';
import { isOffered, modelToolNames } from './tool-names.js';

describe('model tool names', () => {
  it('names a tool after its server', () => {
    expect(modelToolNames('github', ['create_issue']).get('create_issue')).toBe('mcp__github__create_issue');
  });

  it('keeps every name within 64 API-safe characters and unique', () => {
    const tools = ['a.b', 'a_b', 'x'.repeat(100), `${'x'.repeat(99)}y`, 'ünïcode tool', 'a/b'];
    const names = [...modelToolNames('server-name_01', tools).values()];
    expect(names).toHaveLength(tools.length);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
  });

  it('lets through what allow names and deny does not', () => {
    expect(isOffered({}, 'read')).toBe(true);
    expect(isOffered({ allow: ['read'] }, 'write')).toBe(false);
    expect(isOffered({ allow: ['read', 'write'], deny: ['write'] }, 'write')).toBe(false);
    expect(isOffered({ deny: ['write'] }, 'read')).toBe(true);
  });
});
