// Each activity runs on the few ports it names: runTool and failTurn given only theirs, and a step whose decision
// needs a port it was not given fails at once, naming it.
import { beforeEach, describe, expect, it } from 'vitest';
import {
  input,
  ref,
  round0,
  ScriptedModel,
  toolCallReply,
  TurnFixture,
} from '../../../test/support/turn-fixture.js';
import { failTurn } from './fail-turn.js';
import { llmStep } from './llm-step.js';
import { runTool } from './run-tool.js';
import { runTurnStep } from './turn-runner.js';
import type { FailPorts, ToolPorts, TurnServices } from './turn-services.js';

let t: TurnFixture;

beforeEach(() => {
  t = new TurnFixture();
});

function only<K extends keyof TurnServices>(services: TurnServices, keys: K[]): Pick<TurnServices, K> {
  return Object.fromEntries(keys.map((key) => [key, services[key]])) as Pick<TurnServices, K>;
}

describe("a step's ports", () => {
  it('are enough for runTool: the guard, its stream, the record, the tools, the stop', async () => {
    t.model = new ScriptedModel([toolCallReply]);
    const step = await llmStep(t.services(), round0);
    const ports: ToolPorts = only(t.services(), [
      ...(['sessions', 'eraser', 'headers', 'cancellation', 'log'] as const),
      ...(['events', 'sink', 'settings', 'turns', 'tools', 'now'] as const),
    ]);
    expect(await runTool(ports, { ...ref, round: 0, index: 0, seq: step.nextSeq })).toEqual({
      isError: false,
    });
    expect(t.storedEvents().at(-1)).toMatchObject({ type: 'tool-result', result: '{"sum":5}' });
  });

  it('are enough for failTurn: the guard, its stream, working memory, the record, the header, the end', async () => {
    const ports: FailPorts = only(t.services(), [
      ...(['sessions', 'eraser', 'headers', 'cancellation', 'log', 'events', 'sink', 'settings'] as const),
      ...(['workingMemory', 'turns', 'publisher', 'now'] as const),
    ]);
    const failure = { code: 'llm_unavailable', message: 'The model did not answer.' };
    await failTurn(ports, { ...ref, userText: input.text, postedAt: input.postedAt, failure });
    expect(t.storedEvents().map((event) => event.type)).toEqual(['message-start', 'error']);
    expect(t.published).toHaveLength(1);
  });

  it('refuse an effect that needs a port the step was not given, naming it', async () => {
    const services = t.services();
    const { llm: _llm, ...withoutModel } = services;
    const call = runTurnStep(
      withoutModel,
      ref,
      () => Promise.resolve({ state: undefined, firstSeq: 1 }),
      () => ({
        state: undefined,
        effects: [{ kind: 'call-model', messages: [], toolsAllowed: false, watchFrom: undefined }],
      }),
    );
    await expect(call).rejects.toThrow("needs the port 'llm'");
    expect(t.storedEvents()).toEqual([]);
  });
});
