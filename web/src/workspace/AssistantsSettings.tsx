// The Settings dialog's assistants: the caller's own (edit, delete) and the public ones of others (listed, used
// from a new chat), and a form that creates or edits one. Every edit is a new version on the server.
import { Pencil, Plus, Trash2 } from 'lucide-react';
import { useCallback, useEffect, useState } from 'react';
import type { ReactNode } from 'react';
import { describeError } from '../api/client';
import type { ApiClient } from '../api/client';
import { ConfirmDialog } from '../panels/ConfirmDialog';
import type { ConfirmRequest } from '../panels/ConfirmDialog';
import { AssistantForm } from './AssistantForm';
import { deleteAssistant, listAssistants, listModels, saveAssistant } from './workspace-api';
import type { AssistantFields, AssistantView, ModelChoice } from './workspace-api';
import { PanelNotices } from '../panels/PanelNotices';

type Editing = { assistant: AssistantView | undefined } | undefined;

export function AssistantsSettings(props: { api: ApiClient }): ReactNode {
  const { api } = props;
  const [assistants, setAssistants] = useState<AssistantView[] | undefined>(undefined);
  const [models, setModels] = useState<ModelChoice[]>([]);
  const [editing, setEditing] = useState<Editing>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [status, setStatus] = useState('');
  const [busy, setBusy] = useState(false);
  const [confirm, setConfirm] = useState<ConfirmRequest | undefined>(undefined);
  const reload = useCallback(
    () => listAssistants(api).then(setAssistants, (failure: unknown) => setError(describeError(failure))),
    [api],
  );
  useEffect(() => {
    void reload();
    listModels(api).then(setModels, () => undefined);
  }, [api, reload]);

  const run = async (action: () => Promise<unknown>, done: string): Promise<boolean> => {
    setBusy(true);
    setError(undefined);
    try {
      await action();
      setStatus(done);
      await reload();
      return true;
    } catch (failure) {
      setError(describeError(failure));
      return false;
    } finally {
      setBusy(false);
    }
  };
  const save = (fields: AssistantFields): void => {
    const id = editing?.assistant?.assistantId;
    void run(() => saveAssistant(api, fields, id), `${fields.name} was saved.`).then(
      (saved) => saved && setEditing(undefined),
    );
  };
  const own = assistants?.filter((assistant) => assistant.ownedByYou) ?? [];
  const shared = assistants?.filter((assistant) => !assistant.ownedByYou) ?? [];

  return (
    <section className="panel" aria-labelledby="assistants-heading">
      <h2 id="assistants-heading">Assistants</h2>
      <p className="muted m-0 text-sm">
        An assistant starts a chat with its own instructions, model and conversation starters. Pick one over
        the message box of a new chat.
      </p>
      <PanelNotices status={status} error={error} />
      {assistants === undefined ? (
        <p className="muted m-0">Loading…</p>
      ) : (
        <ul className="m-0 flex list-none flex-col gap-1 p-0" aria-label="Your assistants">
          {own.length === 0 ? <li className="muted text-sm">You have no assistants yet.</li> : null}
          {own.map((assistant) => (
            <li key={assistant.assistantId} className="flex min-w-0 items-center gap-2 text-sm">
              <span className="min-w-0 flex-1 truncate">
                {assistant.name}
                <span className="muted">
                  {' '}
                  · v{assistant.version}
                  {assistant.visibility === 'public' ? ' · public' : ''}
                </span>
              </span>
              <button
                type="button"
                className="btn btn-quiet btn-icon"
                aria-label={`Edit ${assistant.name}`}
                onClick={() => setEditing({ assistant })}
              >
                <Pencil size={16} aria-hidden />
              </button>
              <button
                type="button"
                className="btn btn-quiet btn-icon"
                aria-label={`Delete ${assistant.name}`}
                disabled={busy}
                onClick={() =>
                  setConfirm({
                    title: `Delete ${assistant.name}?`,
                    message: 'Conversations already started with it keep what it told them.',
                    confirmLabel: 'Delete',
                    onConfirm: () =>
                      void run(
                        () => deleteAssistant(api, assistant.assistantId),
                        `${assistant.name} was deleted.`,
                      ),
                  })
                }
              >
                <Trash2 size={16} aria-hidden />
              </button>
            </li>
          ))}
        </ul>
      )}
      {shared.length === 0 ? null : (
        <p className="muted m-0 text-sm">
          Public assistants of others: {shared.map((a) => a.name).join(', ')}
        </p>
      )}
      {editing === undefined ? (
        <button type="button" className="btn self-start" onClick={() => setEditing({ assistant: undefined })}>
          <Plus size={16} aria-hidden />
          New assistant
        </button>
      ) : (
        <AssistantForm
          key={editing.assistant?.assistantId ?? 'new'}
          editing={editing.assistant}
          models={models}
          busy={busy}
          onSave={save}
          onCancel={() => setEditing(undefined)}
        />
      )}
      <ConfirmDialog request={confirm} onClose={() => setConfirm(undefined)} />
    </section>
  );
}
