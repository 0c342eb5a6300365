// The personal API keys settings: a form makes a key, shown once with a copy button and a warning; the list shows
// each key's name, prefix and dates, and revokes one. Each refusal shows the service's words.
import { KeyRound } from 'lucide-react';
import { useCallback, useEffect, useId, useRef, useState } from 'react';
import type { ReactNode } from 'react';
import { describeError } from '../api/client';
import type { ApiClient } from '../api/client';
import { CopyButton } from '../chat/CopyButton';
import { AskFirstButton, ConfirmDialog } from '../panels/ConfirmDialog';
import type { ConfirmRequest } from '../panels/ConfirmDialog';
import { apiKeysApi, expiryIn, keyState, shortDate } from './api-keys-api';
import type { ApiKeyInfo, ApiKeyList } from './api-keys-api';
import { PanelNotices } from '../panels/PanelNotices';

const EXPIRY_CHOICES: { label: string; days: number | undefined }[] = [
  { label: 'In 30 days', days: 30 },
  { label: 'In 90 days', days: 90 },
  { label: 'In a year', days: 365 },
  { label: 'Never', days: undefined },
];

export function ApiKeysSettings(props: { api: ApiClient }): ReactNode {
  const { api } = props;
  const [list, setList] = useState<ApiKeyList | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [status, setStatus] = useState('');
  const [busy, setBusy] = useState(false);
  const [name, setName] = useState('');
  const [expiry, setExpiry] = useState('0');
  const [made, setMade] = useState<(ApiKeyInfo & { key: string }) | undefined>(undefined);
  const [confirm, setConfirm] = useState<ConfirmRequest | undefined>(undefined);
  const heading = useRef<HTMLHeadingElement>(null);
  const id = useId();

  const reload = useCallback(
    () =>
      apiKeysApi.list(api).then(
        (answer) => setList(answer),
        (failure: unknown) => setError(describeError(failure)),
      ),
    [api],
  );
  useEffect(() => {
    void reload();
  }, [reload]);

  const create = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const expiresAt = expiryIn(EXPIRY_CHOICES[Number(expiry)]?.days);
      const key = await apiKeysApi.create(api, {
        name: name.trim(),
        ...(expiresAt === undefined ? {} : { expiresAt }),
      });
      setMade(key);
      setName('');
      setStatus(`Created the key ${key.name}. Copy it now: it is shown only once.`);
      await reload();
    } catch (failure) {
      setError(describeError(failure));
    } finally {
      setBusy(false);
    }
  };

  const revoke = async (key: ApiKeyInfo) => {
    setError(undefined);
    try {
      await apiKeysApi.revoke(api, key.id);
      if (made?.id === key.id) setMade(undefined);
      setList((previous) =>
        previous === undefined
          ? previous
          : { ...previous, keys: previous.keys.filter((item) => item.id !== key.id) },
      );
      setStatus(`Revoked ${key.name}.`);
      heading.current?.focus();
    } catch (failure) {
      setError(describeError(failure));
    }
  };

  const row = (key: ApiKeyInfo): ReactNode => (
    <li key={key.id} className="panel-item flex flex-col gap-1.5" aria-label={key.name}>
      <div className="flex flex-wrap items-baseline gap-x-2">
        <span className="font-semibold">{key.name}</span>
        <code className="muted text-xs">{key.prefix}…</code>
        {keyState(key) === 'expired' ? <span className="muted text-xs">expired</span> : null}
      </div>
      <div className="panel-meta">
        Created {shortDate(key.createdAt, '')} · Last used {shortDate(key.lastUsedAt, 'never')} · Expires{' '}
        {shortDate(key.expiresAt, 'never')}
      </div>
      <div>
        <AskFirstButton
          label="Revoke"
          ariaLabel={`Revoke ${key.name}`}
          ask={setConfirm}
          request={{
            title: 'Revoke this API key?',
            message: `Programs using "${key.name}" (${key.prefix}…) are refused within seconds. This cannot be undone.`,
            onConfirm: () => void revoke(key),
          }}
        />
      </div>
    </li>
  );

  return (
    <section className="panel" aria-labelledby="api-keys-heading">
      <h2 id="api-keys-heading" ref={heading} tabIndex={-1}>
        API keys
      </h2>
      <p className="muted m-0 text-sm">
        A key lets a program act as you on the OpenAI-compatible API (<code>/api/v1</code>) and MCP (
        <code>/api/mcp</code>), for example Claude Desktop or Cursor with your memory. Send it as{' '}
        <code>Authorization: Bearer cmk_…</code>.
      </p>
      <PanelNotices status={status} error={error} />
      {made === undefined ? null : (
        <div className="flex flex-col gap-2 rounded-lg border border-line p-3" aria-label="Your new key">
          <p className="m-0 text-sm font-semibold">
            <KeyRound size={14} aria-hidden className="mr-1 inline" />
            Copy your new key now: it will not be shown again.
          </p>
          <div className="flex min-w-0 items-center gap-2">
            <code className="min-w-0 flex-1 text-sm [overflow-wrap:anywhere]" data-testid="new-api-key">
              {made.key}
            </code>
            <CopyButton text={made.key} label="Copy the key" />
          </div>
          <p className="muted m-0 text-xs">
            Anyone with it can read your conversations and memory through the API: keep it like a password,
            and revoke it here if it leaks.
          </p>
          <div>
            <button type="button" className="btn btn-small" onClick={() => setMade(undefined)}>
              Done
            </button>
          </div>
        </div>
      )}
      {list === undefined ? (
        <p className="muted m-0">Loading keys…</p>
      ) : list.keys.length === 0 ? (
        <p className="muted m-0">You have no API key.</p>
      ) : (
        <ul className="panel-list" aria-label="Your API keys">
          {list.keys.map(row)}
        </ul>
      )}
      {list === undefined ? null : !list.enabled ? (
        <p className="muted m-0 text-sm">The operator of this service has turned API keys off.</p>
      ) : (
        <form
          aria-labelledby={`${id}-title`}
          className="flex flex-col gap-2 rounded-lg border border-line p-3"
          onSubmit={(event) => {
            event.preventDefault();
            void create();
          }}
        >
          <h3 id={`${id}-title`} className="m-0 text-[0.95rem] font-semibold">
            Create a key
          </h3>
          <div className="flex flex-col gap-1 text-sm">
            <label htmlFor={`${id}-name`}>Key name</label>
            <input
              id={`${id}-name`}
              required
              maxLength={100}
              autoComplete="off"
              placeholder="Claude Desktop"
              value={name}
              onChange={(event) => setName(event.target.value)}
            />
          </div>
          <div className="flex flex-col gap-1 text-sm">
            <label htmlFor={`${id}-expiry`}>Key expires</label>
            <select id={`${id}-expiry`} value={expiry} onChange={(event) => setExpiry(event.target.value)}>
              {EXPIRY_CHOICES.map((choice, index) => (
                <option key={choice.label} value={String(index)}>
                  {choice.label}
                </option>
              ))}
            </select>
          </div>
          <p className="muted m-0 text-xs">You may hold {list.maxKeys} keys at most.</p>
          <div>
            <button type="submit" className="btn btn-primary" disabled={busy}>
              Create key
            </button>
          </div>
        </form>
      )}
      <ConfirmDialog request={confirm} onClose={() => setConfirm(undefined)} />
    </section>
  );
}
