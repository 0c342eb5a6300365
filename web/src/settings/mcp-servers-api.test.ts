import { describe, expect, it } from 'vitest';
import { headersOf } from './mcp-servers-api';

describe('headersOf', () => {
  it('keeps the filled rows and skips the empty ones', () => {
    expect(
      headersOf([
        { name: ' Authorization ', value: 'Bearer x' },
        { name: '', value: '' },
        { name: 'X-Team', value: 'blue' },
      ]),
    ).toEqual({ headers: { Authorization: 'Bearer x', 'X-Team': 'blue' } });
  });

  it('refuses a value without a name, a name without a value, and a name given twice', () => {
    expect(headersOf([{ name: '', value: 'secret' }])).toEqual({
      problem: 'A header value needs a header name.',
    });
    expect(headersOf([{ name: 'X-Key', value: '' }])).toEqual({ problem: 'The header X-Key needs a value.' });
    expect(
      headersOf([
        { name: 'X-Key', value: 'a' },
        { name: 'x-key', value: 'b' },
      ]),
    ).toEqual({ problem: 'The header x-key is given twice.' });
  });
});
