// The form that creates or edits an assistant: name, description, instructions, model, memory, starters (one a
// line) and visibility.
import { useId, useState } from 'react';
import type { ReactNode } from 'react';
import type { AssistantFields, AssistantView, ModelChoice } from './workspace-api';

const MEMORY_LABELS: Record<AssistantFields['memory'], string> = {
  user: 'Uses your memory',
  assistant: 'A memory of its own',
  none: 'No memory',
};

export function AssistantForm(props: {
  editing: AssistantView | undefined;
  models: readonly ModelChoice[];
  busy: boolean;
  onSave: (fields: AssistantFields) => void;
  onCancel: () => void;
}): ReactNode {
  const { editing } = props;
  const id = useId();
  const [name, setName] = useState(editing?.name ?? '');
  const [description, setDescription] = useState(editing?.description ?? '');
  const [instructions, setInstructions] = useState(editing?.instructions ?? '');
  const [model, setModel] = useState(editing?.model ?? '');
  const [memory, setMemory] = useState<AssistantFields['memory']>(editing?.memory ?? 'user');
  const [starters, setStarters] = useState((editing?.starters ?? []).join('\n'));
  const [visibility, setVisibility] = useState<AssistantFields['visibility']>(
    editing?.visibility ?? 'private',
  );
  const field = 'flex flex-col gap-1 text-sm';
  return (
    <form
      className="flex flex-col gap-2 rounded-lg border border-line p-3"
      aria-labelledby={`${id}-title`}
      onSubmit={(event) => {
        event.preventDefault();
        props.onSave({
          name: name.trim(),
          description: description.trim(),
          instructions,
          memory,
          visibility,
          starters: starters
            .split('\n')
            .map((line) => line.trim())
            .filter((line) => line !== '')
            .slice(0, 6),
          ...(model === '' ? {} : { model }),
        });
      }}
    >
      <h3 id={`${id}-title`} className="m-0 text-[0.95rem] font-semibold">
        {editing === undefined ? 'New assistant' : `Edit ${editing.name}`}
      </h3>
      <div className={field}>
        <label htmlFor={`${id}-name`}>Name</label>
        <input
          id={`${id}-name`}
          required
          maxLength={200}
          value={name}
          onChange={(event) => setName(event.target.value)}
        />
      </div>
      <div className={field}>
        <label htmlFor={`${id}-description`}>Description</label>
        <input
          id={`${id}-description`}
          maxLength={1000}
          value={description}
          onChange={(event) => setDescription(event.target.value)}
        />
      </div>
      <div className={field}>
        <label htmlFor={`${id}-instructions`}>Instructions</label>
        <textarea
          id={`${id}-instructions`}
          rows={4}
          value={instructions}
          onChange={(event) => setInstructions(event.target.value)}
        />
      </div>
      <div className="flex flex-wrap gap-2">
        <div className={`${field} min-w-0 flex-1 basis-40`}>
          <label htmlFor={`${id}-model`}>Model</label>
          <select id={`${id}-model`} value={model} onChange={(event) => setModel(event.target.value)}>
            <option value="">The default model</option>
            {props.models.map((choice) => (
              <option key={choice.id} value={choice.id}>
                {choice.label ?? choice.id}
              </option>
            ))}
          </select>
        </div>
        <div className={`${field} min-w-0 flex-1 basis-40`}>
          <label htmlFor={`${id}-memory`}>Memory</label>
          <select
            id={`${id}-memory`}
            value={memory}
            onChange={(event) => setMemory(event.target.value as AssistantFields['memory'])}
          >
            {Object.entries(MEMORY_LABELS).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </div>
        <div className={`${field} min-w-0 flex-1 basis-40`}>
          <label htmlFor={`${id}-visibility`}>Who can use it</label>
          <select
            id={`${id}-visibility`}
            value={visibility}
            onChange={(event) => setVisibility(event.target.value as AssistantFields['visibility'])}
          >
            <option value="private">Only you</option>
            <option value="public">Everyone (public)</option>
          </select>
        </div>
      </div>
      <div className={field}>
        <label htmlFor={`${id}-starters`}>Conversation starters (one a line, at most six)</label>
        <textarea
          id={`${id}-starters`}
          rows={3}
          value={starters}
          onChange={(event) => setStarters(event.target.value)}
        />
      </div>
      <div className="flex gap-2">
        <button type="submit" className="btn btn-primary" disabled={props.busy}>
          {editing === undefined ? 'Create assistant' : 'Save assistant'}
        </button>
        <button type="button" className="btn btn-quiet" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
