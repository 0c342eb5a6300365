// Files picked, dropped or pasted into the composer: kept to what a message may carry, and turned into useChat file
// parts (data: URLs) when the message is sent; the server checks them again and stores them.
import type { FileUIPart } from 'ai';
import type { AttachmentRules } from '../../../shared/attachments/rules.js';
import type { ApiClient } from '../api/client';

/** The checks an upload meets, as GET /api/attachment-rules tells them (the server's own type, in its contract). */
export type { AttachmentRules } from '../../../shared/attachments/rules.js';

/** What the composer assumes until the server has said: the server's defaults. */
export const DEFAULT_RULES: AttachmentRules = {
  enabled: true,
  types: [
    'image/png',
    'image/jpeg',
    'image/webp',
    'image/gif',
    'application/pdf',
    'text/plain',
    'text/markdown',
    'text/csv',
    'application/json',
  ],
  maxFileBytes: 20 * 1024 * 1024,
  directUploadBytes: 4 * 1024 * 1024,
  maxPerMessage: 10,
  maxMessageBytes: 50 * 1024 * 1024,
  maxPixels: 40_000_000,
  vision: true,
};

/** What the attach button offers; the server reads the type from the bytes whatever this says. */
export const ACCEPTED =
  'image/png,image/jpeg,image/webp,image/gif,application/pdf,text/plain,text/markdown,text/csv,application/json,.md,.txt,.csv,.json';

/** Names of text files a browser may give no type, or a wrong one (a .ts file is video/mp2t to it). */
const TEXT_NAME =
  /\.(txt|md|markdown|csv|tsv|json|jsonl|log|ini|toml|ya?ml|xml|html?|css|s?[cm]?[jt]sx?|py|rb|go|rs|java|kt|swift|c|h|cc|cpp|hpp|cs|php|sh|sql|r|lua|pl)$/i;
const TEXT_TYPE = /^text\/|json|xml|javascript|typescript|yaml|x-sh|sql/;

/** Why the server would refuse this file's type, or undefined when it would take it (as far as the page can tell). */
function typeRefusal(file: { name: string; type: string }, rules: AttachmentRules): string | undefined {
  const type = file.type.toLowerCase();
  if (type.startsWith('image/')) {
    if (!rules.types.includes(type)) return `${type} images are not taken here`;
    return rules.vision ? undefined : 'the model here does not see images';
  }
  if (rules.types.includes(type)) return undefined;
  // The server sniffs text from the bytes, and its text types cover source code of any name.
  const text = rules.types.some((allowed) => allowed.startsWith('text/'));
  if (text && (type === '' || TEXT_TYPE.test(type) || TEXT_NAME.test(file.name))) return undefined;
  return `${type === '' ? 'this kind of file' : type} is not taken here (${rules.types.join(', ')})`;
}

function megabytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / (1024 * 1024)).toFixed(1)} MB` : `${Math.ceil(bytes / 1024)} KB`;
}

/**
 * The files with the new ones added when the server's rules would take them; `refused` says, for each one left out,
 * which rule it breaks. The server checks again (the pixels of an image only it reads).
 */
export function addFiles(
  current: readonly File[],
  added: readonly File[],
  rules: AttachmentRules = DEFAULT_RULES,
): { files: File[]; refused: string[] } {
  const files = [...current];
  const refused: string[] = [];
  let bytes = current.reduce((sum, file) => sum + file.size, 0);
  for (const file of added) {
    const why = !rules.enabled
      ? 'files cannot be attached here (no storage is set up)'
      : (typeRefusal(file, rules) ??
        (file.size > rules.maxFileBytes
          ? `it is ${megabytes(file.size)}: a file may be at most ${megabytes(rules.maxFileBytes)}`
          : files.length >= rules.maxPerMessage
            ? `a message carries at most ${rules.maxPerMessage} files`
            : bytes + file.size > rules.maxMessageBytes
              ? `a message's files may come to at most ${megabytes(rules.maxMessageBytes)}`
              : undefined));
    if (why === undefined) {
      files.push(file);
      bytes += file.size;
    } else refused.push(`${file.name}: ${why}.`);
  }
  return { files, refused };
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

/**
 * The files as useChat file parts: each up to `directUploadBytes` as a data: URL, each larger one uploaded straight to
 * Blob Storage first and named by its id, as a file read back from history is.
 */
export async function messageFileParts(
  api: ApiClient,
  files: readonly File[],
  rules: Pick<AttachmentRules, 'directUploadBytes'>,
  fetchImpl: typeof fetch = fetch,
): Promise<FileUIPart[]> {
  const small = await fileParts(files.filter((file) => file.size <= rules.directUploadBytes));
  const parts: FileUIPart[] = [];
  for (const file of files) {
    if (file.size <= rules.directUploadBytes) {
      const part = small.shift();
      if (part !== undefined) parts.push(part);
      continue;
    }
    const attachmentId = await uploadDirectly(api, file, fetchImpl);
    parts.push({
      type: 'file',
      mediaType: file.type || 'application/octet-stream',
      filename: file.name,
      url: attachmentUrl(attachmentId),
    });
  }
  return parts;
}

/**
 * A direct upload: a write-only URL for one blob (POST /api/attachments/uploads), the file PUT there, then
 * /complete, where the server checks it as any file. Gives the attachment's id (the same bytes kept already: that
 * file's).
 */
export async function uploadDirectly(
  api: ApiClient,
  file: File,
  fetchImpl: typeof fetch = fetch,
): Promise<string> {
  const started = await api.json<{ attachmentId: string; uploadUrl: string }>(
    'POST',
    '/api/attachments/uploads',
    {
      filename: file.name,
      ...(file.type === '' ? {} : { mediaType: file.type }),
      size: file.size,
    },
  );
  // Straight to Blob Storage: the URL is the credential, so the API's own headers do not go.
  const put = await fetchImpl(started.uploadUrl, {
    method: 'PUT',
    headers: { 'x-ms-blob-type': 'BlockBlob', 'content-type': file.type || 'application/octet-stream' },
    body: file,
  });
  if (!put.ok) throw new Error(`'${file.name}' could not be uploaded (${put.status} from Blob Storage).`);
  const done = await api.json<{ attachmentId: string }>(
    'POST',
    `/api/attachments/${encodeURIComponent(started.attachmentId)}/complete`,
  );
  return done.attachmentId;
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
