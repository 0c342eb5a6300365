// Saves a conversation as the Markdown file the History API exports. The export needs the caller's token, which a
// plain link cannot send, so the page reads it and hands the browser a blob: URL to save under the server's name.
import type { ApiClient } from '../api/client';

const FALLBACK_NAME = 'conversation.md';

/** Throws the ApiError of a refused export (the client throws on any non-2xx answer). */
export async function downloadConversation(api: ApiClient, sessionId: string): Promise<void> {
  const response = await api.fetch(
    `/api/history/conversations/${encodeURIComponent(sessionId)}/export?format=markdown`,
  );
  const url = URL.createObjectURL(await response.blob());
  try {
    const link = document.createElement('a');
    link.href = url;
    link.download = fileNameOf(response.headers.get('content-disposition')) ?? FALLBACK_NAME;
    document.body.append(link);
    link.click();
    link.remove();
  } finally {
    // The click has handed the blob to the download by now; the URL is not needed after this task.
    setTimeout(() => URL.revokeObjectURL(url), 0);
  }
}

/** The file name a content-disposition header gives (`filename*=UTF-8''…` first, then `filename="…"`). */
export function fileNameOf(disposition: string | null): string | undefined {
  if (disposition === null) return undefined;
  const encoded = /filename\*=UTF-8''([^;]+)/i.exec(disposition);
  if (encoded !== null) {
    try {
      return decodeURIComponent(encoded[1]!.trim());
    } catch {
      // A malformed encoding: fall through to the plain name.
    }
  }
  const plain = /filename="([^"]+)"/i.exec(disposition) ?? /filename=([^;]+)/i.exec(disposition);
  return plain === null ? undefined : plain[1]!.trim();
}
