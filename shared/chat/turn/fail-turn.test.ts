// The failTurn activity over in-memory ports: the user's message and the text its client was shown are kept, the
// header touched before the stream ends with `error`, and the turn announced once.
import { beforeEach, describe, expect, it } from 'vitest';
import {
  answerReply,
  Crash,
  input,
  ref,
  round0,
  ScriptedModel,
  TurnFixture,
} from '../../../test/support/turn-fixture.js';
import { answerText } from '../../streaming/turn-transcript.js';
import { failTurn } from './fail-turn.js';
import { llmStep } from './llm-step.js';

let t: TurnFixture;

beforeEach(() => {
  t = new TurnFixture();
});

describe('failTurn', () => {
  it('record a failed turn with the text its client was shown, end the stream with error, and announce it', async () => {
    t.model = new ScriptedModel([
      { reply: answerReply, crash: new Crash(3) },
      { reply: answerReply, crash: new Crash(4) },
    ]);
    await expect(llmStep(t.services(), round0)).rejects.toThrow('died');
    await expect(llmStep(t.services(), round0)).rejects.toThrow('died');
    const shown = answerText(t.storedEvents());
    expect(shown).toBe('The sum is');

    const failure = { code: 'llm_unavailable', message: 'The model did not answer.' };
    const failInput = { ...ref, userText: input.text, postedAt: input.postedAt, failure };
    await failTurn(t.services(), failInput);
    expect(t.memory.messages).toEqual([
      expect.objectContaining({ role: 'user', content: input.text, failure }),
      expect.objectContaining({ role: 'assistant', content: shown, finishReason: 'error' }),
    ]);
    const stream = t.storedEvents();
    expect(stream.at(-1)).toMatchObject({ type: 'error', code: 'llm_unavailable', seq: stream.length });
    expect(t.published[0]).toMatchObject({ body: { outcome: 'failed' } });

    // Running it again adds nothing.
    await failTurn(t.services(), failInput);
    expect(t.storedEvents()).toEqual(stream);
    expect(t.memory.messages).toHaveLength(2);
  });

  it('touch the header of a failed turn before its error is stored, with the text its client was shown', async () => {
    t.model = new ScriptedModel([{ reply: answerReply, crash: new Crash(3) }]);
    await expect(llmStep(t.services(), round0)).rejects.toThrow('died');
    const failure = { code: 'llm_unavailable', message: 'The model did not answer.' };
    await failTurn(t.services(), { ...ref, userText: input.text, postedAt: input.postedAt, failure });
    expect(t.headers.touches).toHaveLength(1);
    expect(t.headers.touches[0]!.storedBefore).not.toContain('error');
    expect(t.headers.touches[0]!.touch).toMatchObject({
      messageCount: 2,
      preview: 'The sum',
      firstUserText: input.text,
    });
  });
});
