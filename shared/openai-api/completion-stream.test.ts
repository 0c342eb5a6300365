// A long answer's JSON body: spaces while the turn runs, then the JSON, which parses as it is (whitespace first).
import { describe, expect, it } from 'vitest';
import { keptAliveJson, type TurnOutcome } from './completion-stream.js';

describe('a JSON body kept alive', () => {
  it('sends spaces until the outcome, then the outcome, and the whole parses as JSON', async () => {
    let resolve: (outcome: TurnOutcome) => void = () => {};
    const outcome = new Promise<TurnOutcome>((done) => (resolve = done));
    const body = keptAliveJson(outcome, 1);
    const reader = body.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe(' ');
    resolve({
      kind: 'error',
      body: { error: { message: 'down', type: 'server_error', code: 'x', param: null } },
    });
    let text = ' ';
    for (let part = await reader.read(); !part.done; part = await reader.read())
      text += new TextDecoder().decode(part.value);
    expect(text.trim().startsWith('{')).toBe(true);
    expect(JSON.parse(text)).toEqual({
      error: { message: 'down', type: 'server_error', code: 'x', param: null },
    });
  });
});
