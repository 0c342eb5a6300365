// The files chosen for the next message, each with a thumbnail (an image) or its name, and a button that removes it.
import { FileText, X } from 'lucide-react';
import { useEffect, useMemo } from 'react';
import type { ReactNode } from 'react';
import { isImage } from './attachments';

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

/** A user message's images as thumbnails; a click opens the full image in a new tab. */
export function MessageFiles(props: {
  parts: readonly { type: string; url?: string; mediaType?: string; filename?: string }[];
}): ReactNode {
  const files = props.parts.filter((part) => part.type === 'file' && part.url !== undefined);
  if (files.length === 0) return null;
  return (
    <div className="mb-1 flex flex-wrap justify-end gap-1">
      {files.map((file, index) =>
        file.mediaType?.startsWith('image/') ? (
          <img
            key={index}
            src={file.url}
            alt={file.filename ?? 'attached image'}
            className="max-h-40 max-w-48 rounded-lg object-cover"
          />
        ) : (
          <span
            key={index}
            className="flex items-center gap-1 rounded-lg border border-line px-2 py-1 text-xs"
          >
            <FileText size={14} aria-hidden />
            {file.filename ?? 'file'}
          </span>
        ),
      )}
    </div>
  );
}
