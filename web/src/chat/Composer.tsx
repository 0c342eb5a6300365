// The composer: a message box that grows with its text, Enter sends, Shift+Enter starts a new line, and a switch
// keeps one message out of memory; while an answer streams, Stop (or Escape) ends it.
import { ArrowUp, Square } from 'lucide-react';
import { useLayoutEffect, useState } from 'react';
import type { ReactNode, RefObject } from 'react';

/** The box grows up to this many pixels, then scrolls. */
const MAX_HEIGHT_PX = 200;

export function Composer({
  inputRef,
  busy,
  onSend,
  onStop,
}: {
  inputRef: RefObject<HTMLTextAreaElement | null>;
  busy: boolean;
  onSend: (text: string, useMemory: boolean) => void;
  onStop: () => void;
}): ReactNode {
  const [text, setText] = useState('');
  const [remember, setRemember] = useState(true);
  useLayoutEffect(() => {
    const box = inputRef.current;
    if (box === null) return;
    box.style.height = 'auto';
    box.style.height = `${Math.min(box.scrollHeight + 2, MAX_HEIGHT_PX)}px`;
  }, [text, inputRef]);
  const submit = (): void => {
    if (busy || text.trim() === '') return;
    onSend(text, remember);
    setText('');
    setRemember(true);
  };
  return (
    <form
      className="mx-auto w-full max-w-3xl px-2 pb-2 sm:px-4 sm:pb-4"
      aria-label="Send a message"
      onSubmit={(event) => {
        event.preventDefault();
        submit();
      }}
    >
      <div className="rounded-2xl border border-line bg-raised p-2 shadow-sm focus-within:border-accent focus-within:ring-2 focus-within:ring-accent/40">
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
          onKeyDown={(event) => {
            if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
              event.preventDefault();
              submit();
            }
          }}
        />
        <div className="mt-1 flex items-center justify-between gap-2">
          <label className="flex items-center gap-1.5 text-sm text-muted-foreground">
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
