// A modal question before something that cannot be undone (delete, forget): the browser's <dialog> traps focus
// and closes on Escape; focus goes back to what opened it.
import { useEffect, useId, useRef } from 'react';
import type { ReactNode } from 'react';

export interface ConfirmRequest {
  title: string;
  message: string;
  confirmLabel: string;
  onConfirm: () => void;
}

export function ConfirmDialog(props: {
  request: ConfirmRequest | undefined;
  onClose: () => void;
}): ReactNode {
  const { request, onClose } = props;
  const dialog = useRef<HTMLDialogElement>(null);
  const opener = useRef<Element | null>(null);
  const titleId = useId();
  const messageId = useId();

  useEffect(() => {
    const element = dialog.current;
    if (element === null) return;
    if (request !== undefined && !element.open) {
      opener.current = document.activeElement;
      element.showModal();
    } else if (request === undefined && element.open) {
      element.close();
    }
  }, [request]);

  const close = () => {
    onClose();
    if (opener.current instanceof HTMLElement && opener.current.isConnected) opener.current.focus();
  };

  return (
    <dialog
      ref={dialog}
      className="confirm-dialog"
      aria-labelledby={titleId}
      aria-describedby={messageId}
      onClose={() => {
        if (request !== undefined) close();
      }}
    >
      {request === undefined ? null : (
        <form
          method="dialog"
          onSubmit={(event) => {
            event.preventDefault();
            request.onConfirm();
            close();
          }}
        >
          <h2 id={titleId}>{request.title}</h2>
          <p id={messageId}>{request.message}</p>
          <div className="confirm-actions">
            <button type="button" onClick={close} autoFocus>
              Cancel
            </button>
            <button type="submit" className="button-danger">
              {request.confirmLabel}
            </button>
          </div>
        </form>
      )}
    </dialog>
  );
}
