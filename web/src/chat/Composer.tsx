// The composer: a message box that grows with its text, Enter sends, Shift+Enter starts a new line, and a switch
// keeps one message out of memory, files attach by button, drop or paste; while an answer streams, Stop ends it.
import { ArrowUp, Paperclip, Square } from 'lucide-react';
import { useLayoutEffect, useRef, useState } from 'react';
import type { ReactNode, RefObject } from 'react';
import { AttachmentPreviews } from './AttachmentPreviews';
import { ACCEPTED, addFiles } from './attachments';
import type { AttachmentRules } from './attachments';

/** The box grows up to this many pixels, then scrolls. */
const MAX_HEIGHT_PX = 200;

export function Composer({
  inputRef,
  busy,
  rules,
  onSend,
  onStop,
}: {
  inputRef: RefObject<HTMLTextAreaElement | null>;
  busy: boolean;
  /** What the server takes: a file that breaks a rule is refused when it is picked, saying which. */
  rules: AttachmentRules;
  onSend: (text: string, useMemory: boolean, files: File[]) => void;
  onStop: () => void;
}): ReactNode {
  const [text, setText] = useState('');
  const [remember, setRemember] = useState(true);
  const [files, setFiles] = useState<File[]>([]);
  const [refused, setRefused] = useState<string[]>([]);
  const picker = useRef<HTMLInputElement>(null);
  const attach = (added: readonly File[]): void => {
    if (added.length === 0) return;
    const next = addFiles(files, added, rules);
    setFiles(next.files);
    setRefused(next.refused);
  };
  useLayoutEffect(() => {
    const box = inputRef.current;
    if (box === null) return;
    box.style.height = 'auto';
    box.style.height = `${Math.min(box.scrollHeight + 2, MAX_HEIGHT_PX)}px`;
  }, [text, inputRef]);
  const submit = (): void => {
    if (busy || text.trim() === '') return;
    onSend(text, remember, files);
    setText('');
    setRemember(true);
    setFiles([]);
    setRefused([]);
  };
  return (
    <form
      className="mx-auto w-full max-w-3xl px-2 pb-2 sm:px-4 sm:pb-4"
      aria-label="Send a message"
      onSubmit={(event) => {
        event.preventDefault();
        submit();
      }}
      onDragOver={(event) => {
        if (event.dataTransfer.types.includes('Files')) event.preventDefault();
      }}
      onDrop={(event) => {
        if (event.dataTransfer.files.length === 0) return;
        event.preventDefault();
        attach([...event.dataTransfer.files]);
      }}
    >
      <div className="rounded-2xl border border-line bg-raised p-2 shadow-sm focus-within:border-accent focus-within:ring-2 focus-within:ring-accent/40">
        <AttachmentPreviews
          files={files}
          onRemove={(index) => setFiles(files.filter((_, at) => at !== index))}
        />
        <div role="status">
          {refused.length === 0 ? null : (
            <ul className="m-0 list-none px-1.5 text-xs text-danger" aria-label="Files not attached">
              {refused.map((why) => (
                <li key={why}>Not attached: {why}</li>
              ))}
            </ul>
          )}
        </div>
        <label className="sr-only" htmlFor="composer-input">
          Message
        </label>
        <textarea
          id="composer-input"
          ref={inputRef}
          value={text}
          placeholder="Ask anything"
          rows={1}
          className="block w-full resize-none border-0 bg-transparent px-1.5 py-1 focus-visible:outline-none"
          onChange={(event) => setText(event.target.value)}
          onPaste={(event) => {
            if (event.clipboardData.files.length === 0) return;
            event.preventDefault();
            attach([...event.clipboardData.files]);
          }}
          onKeyDown={(event) => {
            if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
              event.preventDefault();
              submit();
            }
          }}
        />
        <div className="mt-1 flex items-center justify-between gap-2">
          <input
            ref={picker}
            type="file"
            multiple
            accept={ACCEPTED}
            className="sr-only"
            tabIndex={-1}
            aria-hidden
            onChange={(event) => {
              attach([...(event.target.files ?? [])]);
              event.target.value = '';
            }}
          />
          <button
            type="button"
            className="btn btn-quiet btn-icon size-8"
            aria-label="Attach files"
            title="Attach files"
            onClick={() => picker.current?.click()}
          >
            <Paperclip size={16} aria-hidden />
          </button>
          <label className="mr-auto flex items-center gap-1.5 text-sm text-muted-foreground">
            <input
              type="checkbox"
              checked={!remember}
              onChange={(event) => setRemember(!event.target.checked)}
            />
            Don’t remember this
          </label>
          {busy ? (
            <button type="button" className="btn btn-icon rounded-full" aria-label="Stop" onClick={onStop}>
              <Square size={14} fill="currentColor" aria-hidden />
            </button>
          ) : (
            <button
              type="submit"
              className="btn btn-primary btn-icon rounded-full"
              aria-label="Send"
              disabled={text.trim() === ''}
            >
              <ArrowUp size={18} aria-hidden />
            </button>
          )}
        </div>
      </div>
    </form>
  );
}
