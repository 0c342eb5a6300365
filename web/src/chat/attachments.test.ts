// The composer's files: refused when picked if the server would refuse them, each saying which rule it breaks;
// and a message's files as POST /api/chat names them.
import { describe, expect, it } from 'vitest';
import type { ApiClient } from '../api/client';
import { addFiles, attachmentIdOf, DEFAULT_RULES, messageFileParts, uploadFileParts } from './attachments';
import type { AttachmentRules } from './attachments';

const file = (name: string, type = 'image/png', size = 1) => new File([new Uint8Array(size)], name, { type });

describe('the files of the next message, checked against what the server takes', () => {
  it(`keeps at most ${DEFAULT_RULES.maxPerMessage}, and says of each one left out why`, () => {
    const nine = Array.from({ length: 9 }, (_, i) => file(`${i}.png`));
    expect(addFiles([], nine)).toEqual({ files: nine, refused: [] });
    const more = addFiles(nine, [file('a.png'), file('b.png'), file('c.png')]);
    expect(more.files.map((f) => f.name)).toEqual([...nine.map((f) => f.name), 'a.png']);
    expect(more.refused).toEqual([
      'b.png: a message carries at most 10 files.',
      'c.png: a message carries at most 10 files.',
    ]);
  });

  it('refuses a type the server does not take, and takes text and source code whatever the browser calls it', () => {
    const rules: AttachmentRules = { ...DEFAULT_RULES, types: ['image/png', 'text/plain'] };
    const { files, refused } = addFiles(
      [],
      [
        file('photo.jpg', 'image/jpeg'),
        file('archive.zip', 'application/zip'),
        file('notes', ''),
        file('main.ts', 'video/mp2t'),
        file('script.py', 'text/x-python'),
        file('shot.png'),
      ],
      rules,
    );
    expect(files.map((f) => f.name)).toEqual(['notes', 'main.ts', 'script.py', 'shot.png']);
    expect(refused).toEqual([
      'photo.jpg: image/jpeg images are not taken here.',
      'archive.zip: application/zip is not taken here (image/png, text/plain).',
    ]);
    expect(addFiles([], [file('notes.md', '')], { ...rules, types: ['image/png'] }).refused).toHaveLength(1);
  });

  it('refuses a file past the size limit, and one that takes the message past its total', () => {
    const rules: AttachmentRules = { ...DEFAULT_RULES, maxFileBytes: 3 * 1024, maxMessageBytes: 5 * 1024 };
    const { files, refused } = addFiles(
      [file('a.png', 'image/png', 2 * 1024)],
      [
        file('big.png', 'image/png', 4 * 1024),
        file('b.png', 'image/png', 2 * 1024),
        file('c.png', 'image/png', 2 * 1024),
      ],
      rules,
    );
    expect(files.map((f) => f.name)).toEqual(['a.png', 'b.png']);
    expect(refused).toEqual([
      'big.png: it is 4 KB: a file may be at most 3 KB.',
      "c.png: a message's files may come to at most 5 KB.",
    ]);
  });

  it('refuses images when the model does not see them, and every file when attachments are off', () => {
    const blind = addFiles([], [file('a.png'), file('n.txt', 'text/plain')], {
      ...DEFAULT_RULES,
      vision: false,
    });
    expect(blind.files.map((f) => f.name)).toEqual(['n.txt']);
    expect(blind.refused).toEqual(['a.png: the model here does not see images.']);
    expect(addFiles([], [file('n.txt', 'text/plain')], { ...DEFAULT_RULES, enabled: false }).refused).toEqual(
      ['n.txt: files cannot be attached here (no storage is set up).'],
    );
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

describe('a file over the direct-upload size', () => {
  it('goes straight to Blob Storage with the write-only URL, then is completed and named by its id', async () => {
    const calls: { method: string; path: string; body?: unknown }[] = [];
    const api: ApiClient = {
      userId: 'u',
      fetch: () => Promise.reject(new Error('not called')),
      json<T>(method: string, path: string, body?: unknown): Promise<T> {
        calls.push({ method, path, ...(body === undefined ? {} : { body }) });
        const answer = path.endsWith('/uploads')
          ? { attachmentId: 'att-up', uploadUrl: 'https://blob.example/c/pending/u/att-up?sp=cw&sig=x' }
          : { attachmentId: 'att-kept' };
        return Promise.resolve(answer as T);
      },
    };
    const puts: { url: string; init: RequestInit | undefined }[] = [];
    const fetchImpl = (url: RequestInfo | URL, init?: RequestInit) => {
      puts.push({ url: typeof url === 'string' ? url : url instanceof URL ? url.href : url.url, init });
      return Promise.resolve(new Response(null, { status: 201 }));
    };
    const big = file('photo.jpg', 'image/jpeg', 2048);
    const parts = await messageFileParts(api, [big], { directUploadBytes: 1024 }, fetchImpl);
    expect(calls).toEqual([
      {
        method: 'POST',
        path: '/api/attachments/uploads',
        body: { filename: 'photo.jpg', mediaType: 'image/jpeg', size: 2048 },
      },
      { method: 'POST', path: '/api/attachments/att-up/complete' },
    ]);
    expect(puts).toHaveLength(1);
    expect(puts[0]?.url).toBe('https://blob.example/c/pending/u/att-up?sp=cw&sig=x');
    expect(puts[0]?.init?.method).toBe('PUT');
    expect(puts[0]?.init?.headers).toEqual({ 'x-ms-blob-type': 'BlockBlob', 'content-type': 'image/jpeg' });
    expect(puts[0]?.init?.body).toBe(big);
    // The id /complete answers (the same bytes kept already give that file's).
    expect(parts).toEqual([
      { type: 'file', mediaType: 'image/jpeg', filename: 'photo.jpg', url: '/api/attachments/att-kept' },
    ]);
  });

  it('says so when Blob Storage refuses the PUT, and completes nothing', async () => {
    const paths: string[] = [];
    const api: ApiClient = {
      userId: 'u',
      fetch: () => Promise.reject(new Error('not called')),
      json<T>(_method: string, path: string): Promise<T> {
        paths.push(path);
        return Promise.resolve({ attachmentId: 'att-up', uploadUrl: 'https://blob.example/x' } as T);
      },
    };
    const refused = () => Promise.resolve(new Response(null, { status: 403 }));
    await expect(
      messageFileParts(api, [file('big.png', 'image/png', 10)], { directUploadBytes: 1 }, refused),
    ).rejects.toThrow("'big.png' could not be uploaded (403 from Blob Storage).");
    expect(paths).toEqual(['/api/attachments/uploads']);
  });
});
