// The composer: Enter sends, Shift+Enter starts a new line, and a switch keeps one message out of memory.
import { useState } from 'react';
import type { ReactNode, Ref } from 'react';

export function Composer({
  ref,
  busy,
  onSend,
  onStop,
}: {
  ref: Ref<HTMLTextAreaElement>;
  busy: boolean;
  onSend: (text: string, useMemory: boolean) => void;
  onStop: () => void;
}): ReactNode {
  const [text, setText] = useState('');
  const [remember, setRemember] = useState(true);
  const submit = (): void => {
    if (busy || text.trim() === '') return;
    onSend(text, remember);
    setText('');
    setRemember(true);
  };
  return (
    <form
      className="composer"
      aria-label="Send a message"
      onSubmit={(event) => {
        event.preventDefault();
        submit();
      }}
    >
      <label className="visually-hidden" htmlFor="composer-input">
        Message
      </label>
      <textarea
        id="composer-input"
        ref={ref}
        value={text}
        placeholder="Message (Enter to send, Shift+Enter for a new line)"
        rows={2}
        onChange={(event) => setText(event.target.value)}
        onKeyDown={(event) => {
          if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
            event.preventDefault();
            submit();
          }
        }}
      />
      <label className="composer-options">
        <input type="checkbox" checked={!remember} onChange={(event) => setRemember(!event.target.checked)} />
        Don’t remember this
      </label>
      {busy ? (
        <button type="button" onClick={onStop}>
          Stop
        </button>
      ) : (
        <button type="submit" className="button-primary" disabled={text.trim() === ''}>
          Send
        </button>
      )}
    </form>
  );
}
