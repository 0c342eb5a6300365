// Files picked, dropped or pasted into the composer: kept to what a message may carry, and turned into useChat file
// parts (data: URLs) when the message is sent; the server checks them again and stores them.
import type { FileUIPart } from 'ai';
import type { ApiClient } from '../api/client';

/** What a message may carry (the server's ATTACHMENTS_MAX_PER_MESSAGE default). */
export const MAX_FILES = 10;

/** What the attach button offers; the server reads the type from the bytes whatever this says. */
export const ACCEPTED =
  'image/png,image/jpeg,image/webp,image/gif,application/pdf,text/plain,text/markdown,text/csv,application/json,.md,.txt,.csv,.json';

/** The files with the new ones added, at most MAX_FILES; `refused` says how many were left out. */
export function addFiles(
  current: readonly File[],
  added: readonly File[],
): { files: File[]; refused: number } {
  const room = Math.max(0, MAX_FILES - current.length);
  return { files: [...current, ...added.slice(0, room)], refused: Math.max(0, added.length - room) };
}

const ATTACHMENT_PATH = '/api/attachments/';

/** A stored file's path, the url of its file part when read back from history. */
export function attachmentUrl(attachmentId: string): string {
  return `${ATTACHMENT_PATH}${encodeURIComponent(attachmentId)}`;
}

/** The stored file a part's url names, or undefined for a data: or blob: URL the page holds itself. */
export function attachmentIdOf(url: string): string | undefined {
  return url.startsWith(ATTACHMENT_PATH) ? decodeURIComponent(url.slice(ATTACHMENT_PATH.length)) : undefined;
}

/** A stored file's bytes, read with the caller's token (GET /api/attachments/{id}: the owner only). */
export async function readAttachment(api: ApiClient, attachmentId: string): Promise<Blob> {
  const response = await api.fetch(attachmentUrl(attachmentId));
  return response.blob();
}

export function isImage(file: { type: string }): boolean {
  return file.type.startsWith('image/');
}

/** The files as useChat file parts, their bytes in data: URLs. */
export function fileParts(files: readonly File[]): Promise<FileUIPart[]> {
  return Promise.all(
    files.map(
      (file) =>
        new Promise<FileUIPart>((resolve, reject) => {
          const reader = new FileReader();
          reader.onload = () =>
            resolve({
              type: 'file',
              mediaType: file.type || 'application/octet-stream',
              filename: file.name,
              url: typeof reader.result === 'string' ? reader.result : '',
            });
          reader.onerror = () => reject(reader.error ?? new Error(`'${file.name}' could not be read.`));
          reader.readAsDataURL(file);
        }),
    ),
  );
}

/** Uploads a message's new file parts (POST /api/attachments) and gives all their ids, for POST /api/chat's attachments. */
export async function uploadFileParts(
  api: ApiClient,
  parts: readonly { type: string; url?: string; mediaType?: string; filename?: string }[],
): Promise<string[]> {
  const ids: string[] = [];
  for (const part of parts) {
    if (part.type !== 'file' || part.url === undefined) continue;
    // A file read back from history is stored already: the message names it again.
    const stored = attachmentIdOf(part.url);
    if (stored !== undefined) {
      ids.push(stored);
      continue;
    }
    const comma = part.url.indexOf(',');
    const uploaded = await api.json<{ attachmentId: string }>('POST', '/api/attachments', {
      name: part.filename ?? 'file',
      ...(part.mediaType === undefined ? {} : { mediaType: part.mediaType }),
      contentBase64: part.url.slice(comma + 1),
    });
    ids.push(uploaded.attachmentId);
  }
  return ids;
}
