// A round that calls the client's tools: the turn runs its own calls of the round, then ends with `tool_calls`
// without another model call, and the client's calls are in its stream and its committed answer.
import { beforeEach, describe, expect, it } from 'vitest';
import { ref, round0, ScriptedModel, TurnFixture } from '../../../test/support/turn-fixture.js';
import { llmStep } from './llm-step.js';
import { runTool } from './run-tool.js';

const weather = { name: 'get_weather', description: 'The weather.', parameters: { type: 'object' } };

let t: TurnFixture;

beforeEach(() => {
  t = new TurnFixture();
});

describe("a round that calls the client's tools", () => {
  it('runs the turn’s own call, then ends handing the client’s call back', async () => {
    t.model = new ScriptedModel([
      {
        content: '',
        reasoning: '',
        toolCalls: [
          { id: 'own', name: 'add_numbers', arguments: '{"a":2,"b":3}' },
          { id: 'theirs', name: 'get_weather', arguments: '{"city":"Paris"}' },
        ],
        finishReason: 'tool_calls',
      },
    ]);
    const first = await llmStep(t.services(), {
      ...round0,
      message: { ...round0.message!, clientTools: [weather] },
    });
    expect(first.outcome).toBe('tools');
    // Only the turn's own call is run here (index 0 of the round).
    expect(first.toolCalls).toEqual([{ index: 0, name: 'add_numbers' }]);
    expect(t.model.requests[0]?.tools?.map((tool) => tool.name)).toContain('get_weather');
    await runTool(t.services(), { ...ref, round: 0, index: 0, seq: first.nextSeq });
    const second = await llmStep(t.services(), {
      ...ref,
      round: 1,
      firstSeq: first.nextSeq + 1,
      toolsAllowed: true,
    });
    expect(second).toMatchObject({ outcome: 'answered', finishReason: 'tool_calls' });
    // No second model call: the client runs its tool, and a next request goes on.
    expect(t.model.requests).toHaveLength(1);
    const events = t.storedEvents();
    expect(events.filter((e) => e.type === 'tool-call').map((e) => e.type === 'tool-call' && e.name)).toEqual(
      ['add_numbers', 'get_weather'],
    );
    expect(events.filter((e) => e.type === 'tool-result')).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ type: 'message-end', finishReason: 'tool_calls' });
    expect(t.committedAnswer()?.toolCalls?.map((call) => call.name)).toEqual(['add_numbers', 'get_weather']);
  });

  it('keeps a turn without client tools as it was: every call runs', async () => {
    const first = await llmStep(t.services(), round0);
    expect(first.toolCalls.map((call) => call.name)).toEqual(['add_numbers']);
  });
});
