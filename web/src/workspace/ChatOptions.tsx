// The bar over the composer: the model the next message goes to (hidden when the catalogue has one model) and,
// for a new chat, the assistant it starts with and whether it is temporary.
import { useEffect, useId, useState } from 'react';
import type { ReactNode } from 'react';
import type { ApiClient } from '../api/client';
import { listAssistants, listModels } from './workspace-api';
import type { AssistantView, ModelChoice } from './workspace-api';
import type { ChatChoices } from './chat-choices';

export function ChatOptions(props: {
  api: ApiClient;
  /** A chat with no session yet: the assistant and temporary choices still apply. */
  isNew: boolean;
  choices: ChatChoices;
  onChange: (choices: ChatChoices) => void;
}): ReactNode {
  const { api, isNew, choices, onChange } = props;
  const [models, setModels] = useState<ModelChoice[]>([]);
  const [assistants, setAssistants] = useState<AssistantView[]>([]);
  const modelId = useId();
  const assistantId = useId();
  useEffect(() => {
    let live = true;
    // Without a catalogue or assistants the bar simply shows less: the chat works as before.
    listModels(api).then(
      (found) => live && setModels(found),
      () => undefined,
    );
    listAssistants(api).then(
      (found) => live && setAssistants(found),
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [api]);
  const fallback = models.find((model) => model.default);
  const pickAssistant = (id: string): void => {
    const assistant = assistants.find((candidate) => candidate.assistantId === id);
    const { assistant: _previous, ...rest } = choices;
    onChange({
      ...rest,
      ...(assistant === undefined ? {} : { assistant }),
      ...(assistant?.model === undefined ? {} : { model: assistant.model }),
    });
  };
  const pickModel = (id: string): void => {
    const { model: _previous, ...rest } = choices;
    onChange(id === '' ? rest : { ...rest, model: id });
  };
  return (
    <div className="mx-auto flex w-full max-w-3xl flex-wrap items-center gap-x-3 gap-y-1 px-2 pb-1 text-sm sm:px-4">
      {models.length > 1 && (
        <span className="flex min-w-0 items-center gap-1.5">
          <label htmlFor={modelId}>Model</label>
          <select
            id={modelId}
            className="min-w-0 max-w-[12rem] truncate"
            value={choices.model ?? ''}
            onChange={(event) => pickModel(event.target.value)}
          >
            <option value="">
              {isNew
                ? `Default (${fallback?.label ?? fallback?.id ?? 'default'})`
                : 'This conversation’s model'}
            </option>
            {models.map((model) => (
              <option key={model.id} value={model.id}>
                {model.label ?? model.id}
              </option>
            ))}
          </select>
        </span>
      )}
      {isNew && assistants.length > 0 && (
        <span className="flex min-w-0 items-center gap-1.5">
          <label htmlFor={assistantId}>Assistant</label>
          <select
            id={assistantId}
            className="min-w-0 max-w-[12rem] truncate"
            value={choices.assistant?.assistantId ?? ''}
            onChange={(event) => pickAssistant(event.target.value)}
          >
            <option value="">None</option>
            {assistants.map((assistant) => (
              <option key={assistant.assistantId} value={assistant.assistantId}>
                {assistant.name}
                {assistant.visibility === 'public' && !assistant.ownedByYou ? ' (public)' : ''}
              </option>
            ))}
          </select>
        </span>
      )}
      {isNew && (
        <label className="flex items-center gap-1.5">
          <input
            type="checkbox"
            checked={choices.temporary}
            onChange={(event) => onChange({ ...choices, temporary: event.target.checked })}
          />
          Temporary chat
        </label>
      )}
      {isNew && choices.temporary && (
        <p className="muted m-0 w-full" role="status">
          A temporary chat uses no memory, is not listed in your conversations, and is deleted after a day.
        </p>
      )}
    </div>
  );
}
