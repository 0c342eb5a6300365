// The composer's files: at most a message's worth, the rest refused with a count.
import { describe, expect, it } from 'vitest';
import type { ApiClient } from '../api/client';
import { addFiles, attachmentIdOf, MAX_FILES, uploadFileParts } from './attachments';

const file = (name: string) => new File(['x'], name, { type: 'image/png' });

describe('the files of the next message', () => {
  it(`keeps at most ${MAX_FILES}, and counts those left out`, () => {
    const nine = Array.from({ length: 9 }, (_, i) => file(`${i}.png`));
    expect(addFiles([], nine)).toEqual({ files: nine, refused: 0 });
    const more = addFiles(nine, [file('a.png'), file('b.png'), file('c.png')]);
    expect(more.files.map((f) => f.name)).toEqual([...nine.map((f) => f.name), 'a.png']);
    expect(more.refused).toBe(2);
  });
});

describe("a message's files as POST /api/chat names them", () => {
  it('uploads the new ones and names a file read back from history by its id, without uploading it again', async () => {
    const posted: unknown[] = [];
    const api: ApiClient = {
      userId: 'u',
      fetch: () => Promise.reject(new Error('not called')),
      json<T>(_method: string, _path: string, body?: unknown): Promise<T> {
        posted.push(body);
        return Promise.resolve({ attachmentId: `new_${posted.length}` } as T);
      },
    };
    const ids = await uploadFileParts(api, [
      { type: 'file', url: '/api/attachments/old_1', mediaType: 'image/png', filename: 'old.png' },
      { type: 'text' },
      { type: 'file', url: 'data:text/plain;base64,aGk=', mediaType: 'text/plain', filename: 'hi.txt' },
    ]);
    expect(ids).toEqual(['old_1', 'new_1']);
    expect(posted).toEqual([{ name: 'hi.txt', mediaType: 'text/plain', contentBase64: 'aGk=' }]);
    expect(attachmentIdOf('data:text/plain;base64,aGk=')).toBeUndefined();
  });
});
