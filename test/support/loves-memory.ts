// The memory and history workers' structured model calls, answered for tests whose messages say "I love <thing>":
// the profile gains "The user loves <thing>.", the summary is the one given, and the index and digest are fixed.
import type { ChatCompletionRequest } from './scripted-model.js';

/** The JSON a structured request of the workers gets; an unexpected request fails the call. */
export function lovesMemoryOutput(request: ChatCompletionRequest, summary: string): object {
  const name = request.response_format?.json_schema?.name;
  const input = JSON.parse(request.messages.at(-1)?.content ?? '{}') as Record<string, unknown>;
  if (name === 'memory_profile_changes') {
    const loves = /I love (\w+)/.exec(String(input.userMessage));
    const add = loves
      ? [{ category: 'interests', statement: `The user loves ${loves[1]}.`, evidence: loves[0] }]
      : [];
    return { add, reaffirm: [], replace: [], retract: [] };
  }
  if (name === 'conversation_summary')
    return { summary, themes: ['hobbies'], persons: [], places: [], user_sentiment: 'positive' };
  if (name === 'exchange_index') return { line: 'What the user loves', tags: ['hobbies'], title: 'Hobbies' };
  if (name === 'session_summary') return { summary: 'Earlier turns.' };
  throw new Error(`unexpected structured request ${String(name)}`);
}
