// The files chosen for the next message (a thumbnail or a name, and a button that removes each), and the files a
// sent message carries.
import { FileText, X } from 'lucide-react';
import { Dialog } from 'radix-ui';
import { useEffect, useMemo, useState } from 'react';
import type { ReactNode } from 'react';
import { attachmentIdOf, isImage } from './attachments';

export function AttachmentPreviews(props: {
  files: readonly File[];
  onRemove: (index: number) => void;
}): ReactNode {
  // Object URLs of the images, revoked when the files change or the previews go.
  const urls = useMemo(
    () => props.files.map((file) => (isImage(file) ? URL.createObjectURL(file) : undefined)),
    [props.files],
  );
  useEffect(() => () => urls.forEach((url) => url && URL.revokeObjectURL(url)), [urls]);
  if (props.files.length === 0) return null;
  return (
    <ul className="mb-1 flex flex-wrap gap-2 p-0" aria-label="Files to send">
      {props.files.map((file, index) => (
        <li
          key={`${file.name}-${index}`}
          className="relative flex items-center gap-1 rounded-lg border border-line p-1 text-xs"
        >
          {urls[index] ? (
            <img src={urls[index]} alt={file.name} className="size-12 rounded object-cover" />
          ) : (
            <FileText size={20} aria-hidden />
          )}
          <span className="max-w-32 truncate">{file.name}</span>
          <button
            type="button"
            className="btn btn-quiet btn-icon size-6"
            aria-label={`Remove ${file.name}`}
            onClick={() => props.onRemove(index)}
          >
            <X size={12} aria-hidden />
          </button>
        </li>
      ))}
    </ul>
  );
}

/** Reads a stored file's bytes with the caller's token. */
export type ReadAttachment = (attachmentId: string) => Promise<Blob>;

type FilePart = { type: string; url?: string; mediaType?: string; filename?: string };

/**
 * A user message's images as thumbnails (a click opens the full image in a dialog) and its other files as chips.
 * A file read back from history is fetched with the caller's token and shown from a blob: URL.
 */
export function MessageFiles(props: {
  parts: readonly FilePart[];
  readAttachment?: ReadAttachment;
}): ReactNode {
  const files = props.parts.filter(
    (part): part is FilePart & { url: string } => part.type === 'file' && part.url !== undefined,
  );
  if (files.length === 0) return null;
  return (
    <div className="mb-1 flex flex-wrap justify-end gap-1">
      {files.map((file, index) => {
        const name = file.filename ?? (isImage({ type: file.mediaType ?? '' }) ? 'attached image' : 'file');
        if (!isImage({ type: file.mediaType ?? '' }))
          return (
            <span
              key={index}
              className="flex items-center gap-1 rounded-lg border border-line px-2 py-1 text-xs"
            >
              <FileText size={14} aria-hidden />
              {name}
            </span>
          );
        const stored = attachmentIdOf(file.url);
        return stored === undefined ? (
          <ImageThumbnail key={index} src={file.url} name={name} />
        ) : (
          <StoredImage key={index} attachmentId={stored} name={name} read={props.readAttachment} />
        );
      })}
    </div>
  );
}

/** A stored image, read once and shown from a blob: URL that is revoked when it goes. */
function StoredImage(props: {
  attachmentId: string;
  name: string;
  read: ReadAttachment | undefined;
}): ReactNode {
  const [src, setSrc] = useState<string>();
  const [failed, setFailed] = useState(false);
  const { attachmentId, read } = props;
  useEffect(() => {
    if (read === undefined) return;
    let url: string | undefined;
    let gone = false;
    read(attachmentId).then(
      (blob) => {
        if (gone) return;
        url = URL.createObjectURL(blob);
        setSrc(url);
      },
      () => !gone && setFailed(true),
    );
    return () => {
      gone = true;
      if (url !== undefined) URL.revokeObjectURL(url);
    };
  }, [attachmentId, read]);
  if (src !== undefined) return <ImageThumbnail src={src} name={props.name} />;
  return (
    <span
      className="flex size-24 items-center justify-center rounded-lg border border-line p-1 text-center text-xs"
      role={failed ? 'note' : 'status'}
    >
      {failed ? `${props.name} could not be read` : `Loading ${props.name}…`}
    </span>
  );
}

/** An image's thumbnail; a click opens it whole in a dialog. */
function ImageThumbnail(props: { src: string; name: string }): ReactNode {
  return (
    <Dialog.Root>
      <Dialog.Trigger className="cursor-zoom-in rounded-lg p-0" aria-label={`Open ${props.name}`}>
        <img src={props.src} alt={props.name} className="max-h-40 max-w-48 rounded-lg object-cover" />
      </Dialog.Trigger>
      <Dialog.Portal>
        <Dialog.Overlay className="fixed inset-0 z-40 bg-black/70" />
        <Dialog.Content
          aria-describedby={undefined}
          className="fixed inset-4 z-40 flex flex-col items-center justify-center gap-2"
        >
          <div className="flex w-full items-center justify-between text-white">
            <Dialog.Title className="m-0 truncate text-sm">{props.name}</Dialog.Title>
            <Dialog.Close className="btn btn-quiet btn-icon text-white" aria-label="Close image">
              <X size={18} aria-hidden />
            </Dialog.Close>
          </div>
          <img src={props.src} alt={props.name} className="max-h-full max-w-full min-h-0 object-contain" />
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}
