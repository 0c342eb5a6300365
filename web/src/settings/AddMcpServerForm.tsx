// The form that adds an MCP server: a name, a URL and optional headers as name/value pairs. Header values are
// typed into password fields and cleared once sent: the service never shows them again, only their names.
import { Plus, X } from 'lucide-react';
import { useId, useState } from 'react';
import type { ReactNode } from 'react';
import type { HeaderRow, NewMcpServer } from './mcp-servers-api';

const EMPTY_ROW: HeaderRow = { name: '', value: '' };

export function AddMcpServerForm(props: {
  busy: boolean;
  /** Sends the server; resolves true when it was added (the form then empties). */
  onAdd: (server: NewMcpServer) => Promise<boolean>;
}): ReactNode {
  const [name, setName] = useState('');
  const [url, setUrl] = useState('');
  const [rows, setRows] = useState<HeaderRow[]>([]);
  const id = useId();

  const setRow = (index: number, change: Partial<HeaderRow>) =>
    setRows((previous) => previous.map((row, at) => (at === index ? { ...row, ...change } : row)));

  return (
    <form
      aria-labelledby={`${id}-title`}
      className="flex flex-col gap-2 rounded-lg border border-line p-3"
      onSubmit={(event) => {
        event.preventDefault();
        void props.onAdd({ name: name.trim(), url: url.trim(), headers: rows }).then((added) => {
          if (!added) return;
          setName('');
          setUrl('');
          setRows([]);
        });
      }}
    >
      <h3 id={`${id}-title`} className="m-0 text-[0.95rem] font-semibold">
        Add a server
      </h3>
      <div className="flex flex-col gap-1 text-sm">
        <label htmlFor={`${id}-name`}>Name</label>
        <input
          id={`${id}-name`}
          required
          autoComplete="off"
          aria-describedby={`${id}-name-hint`}
          value={name}
          onChange={(event) => setName(event.target.value)}
        />
        <span id={`${id}-name-hint`} className="muted text-xs">
          Lowercase letters, digits, _ or -; the model sees its tools as mcp__name__tool.
        </span>
      </div>
      <div className="flex flex-col gap-1 text-sm">
        <label htmlFor={`${id}-url`}>URL</label>
        <input
          id={`${id}-url`}
          type="url"
          required
          autoComplete="off"
          placeholder="https://example.com/mcp"
          value={url}
          onChange={(event) => setUrl(event.target.value)}
        />
      </div>
      <fieldset className="m-0 flex min-w-0 flex-col gap-2 border-0 p-0 text-sm">
        <legend className="mb-1 p-0">Headers (optional)</legend>
        <p className="muted m-0 text-xs">
          For an API key, for example Authorization. Values are kept sealed and never shown again.
        </p>
        {rows.map((row, index) => (
          <div key={index} className="flex min-w-0 flex-wrap items-end gap-2">
            <div className="flex min-w-0 flex-1 basis-32 flex-col gap-1">
              <label htmlFor={`${id}-header-${index}-name`}>Header {index + 1} name</label>
              <input
                id={`${id}-header-${index}-name`}
                autoComplete="off"
                value={row.name}
                onChange={(event) => setRow(index, { name: event.target.value })}
              />
            </div>
            <div className="flex min-w-0 flex-1 basis-32 flex-col gap-1">
              <label htmlFor={`${id}-header-${index}-value`}>Header {index + 1} value</label>
              <input
                id={`${id}-header-${index}-value`}
                type="password"
                autoComplete="off"
                value={row.value}
                onChange={(event) => setRow(index, { value: event.target.value })}
              />
            </div>
            <button
              type="button"
              className="btn btn-quiet btn-icon"
              aria-label={`Remove header ${index + 1}`}
              onClick={() => setRows((previous) => previous.filter((_, at) => at !== index))}
            >
              <X size={16} aria-hidden />
            </button>
          </div>
        ))}
        <div>
          <button
            type="button"
            className="btn btn-quiet btn-small"
            onClick={() => setRows((previous) => [...previous, EMPTY_ROW])}
          >
            <Plus size={14} aria-hidden />
            Add a header
          </button>
        </div>
      </fieldset>
      <div>
        <button type="submit" className="btn btn-primary" disabled={props.busy}>
          Add server
        </button>
      </div>
    </form>
  );
}
