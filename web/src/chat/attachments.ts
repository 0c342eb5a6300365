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

/** Uploads a message's file parts (POST /api/attachments) and gives their ids, for POST /api/chat's attachments. */
export async function uploadFileParts(
  api: ApiClient,
  parts: readonly { type: string; url?: string; mediaType?: string; filename?: string }[],
): Promise<string[]> {
  const ids: string[] = [];
  for (const part of parts) {
    if (part.type !== 'file' || part.url === undefined) continue;
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
