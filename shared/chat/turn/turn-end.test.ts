// The one line a finished turn logs, over in-memory ports: written once, by the attempt that ended the stream.
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
import { failTurn } from './fail-turn.js';
import { llmStep } from './llm-step.js';
import { runTool } from './run-tool.js';
import type { TurnServices } from './turn-services.js';

let t: TurnFixture;

beforeEach(() => {
  t = new TurnFixture();
});

describe('the end of a turn', () => {
  describe('the one line a finished turn logs', () => {
    function logged(): { lines: string[]; services: TurnServices } {
      const lines: string[] = [];
      const log = {
        log: (...args: unknown[]) => void lines.push(args.map(String).join(' ')),
        warn: () => undefined,
      };
      return { lines, services: { ...t.services(), log } };
    }

    it('is written once by the step that commits, with tokens over every round, and not again on a rerun', async () => {
      const { lines, services: withLog } = logged();
      const first = await llmStep(withLog, round0);
      await runTool(withLog, { ...ref, round: 0, index: 0, seq: first.nextSeq });
      const round1 = { ...ref, round: 1, firstSeq: first.nextSeq + 1, toolsAllowed: true };
      await llmStep(withLog, round1);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        new RegExp(
          `^Turn ended: session ${ref.sessionId}, turn ${ref.chatMessageId}, finish stop, tokens \\d+ in`,
        ),
      );
      expect(lines[0]).toContain('5.0 s since posted, 2 model rounds');
      await llmStep(withLog, round1);
      expect(lines).toHaveLength(1);
    });

    it('is written by the attempt that ends the stream of a turn committed just before a crash', async () => {
      t.model = new ScriptedModel([answerReply]);
      await llmStep(t.services(), round0);
      const all = t.storedEvents();
      for (const event of all.slice(all.length - 2)) t.events.stored.delete(event.seq);
      const { lines, services: withLog } = logged();
      await llmStep(withLog, round0);
      expect(lines).toEqual([expect.stringMatching(/finish stop, tokens \d+ in, \d+ out/)]);
    });

    it('says error for a failed turn, once', async () => {
      t.model = new ScriptedModel([{ reply: answerReply, crash: new Crash(3) }]);
      await expect(llmStep(t.services(), round0)).rejects.toThrow('died');
      const { lines, services: withLog } = logged();
      const failure = { code: 'llm_unavailable', message: 'The model did not answer.' };
      const failInput = { ...ref, userText: input.text, postedAt: input.postedAt, failure };
      await failTurn(withLog, failInput);
      await failTurn(withLog, failInput);
      expect(lines).toEqual([
        expect.stringMatching(/finish error, tokens not reported, 5\.0 s since posted/),
      ]);
    });
  });
});
