// What the offline model says of the images in a message: each one's type, size and digest, read from the data URL
// it came in, so a test (or a developer) sees that exactly these bytes reached the model.
import { createHash } from 'node:crypto';

/** A content part as either API sends it: Chat Completions' `image_url` {url} or the Responses API's `input_image`. */
interface Part {
  type: string;
  image_url?: unknown;
}

/** The data URLs of a message's image parts, in order. */
export function imageUrls(content: unknown): string[] {
  if (!Array.isArray(content)) return [];
  return (content as Part[]).flatMap((part) => {
    const value = part.image_url;
    if (part.type === 'image_url' && typeof value === 'object' && value !== null) {
      const url = (value as { url?: unknown }).url;
      return typeof url === 'string' ? [url] : [];
    }
    if (part.type === 'input_image' && typeof value === 'string') return [value];
    return [];
  });
}

/** One line per image: `image/png, 1234 bytes, sha256 <hex>`; undefined when the message has none. */
export function describeImages(content: unknown): string | undefined {
  const urls = imageUrls(content);
  if (urls.length === 0) return undefined;
  const lines = urls.map((url, index) => {
    const match = /^data:([^;,]+);base64,(.*)$/s.exec(url);
    if (match?.[1] === undefined || match[2] === undefined)
      return `${index + 1}. an image by URL (not fetched)`;
    const bytes = Buffer.from(match[2], 'base64');
    return `${index + 1}. ${match[1]}, ${bytes.length} bytes, sha256 ${createHash('sha256').update(bytes).digest('hex')}`;
  });
  return `I received ${urls.length} image${urls.length === 1 ? '' : 's'}:\n${lines.join('\n')}`;
}
