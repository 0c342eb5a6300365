// The composer's files: at most a message's worth, the rest refused with a count.
import { describe, expect, it } from 'vitest';
import { addFiles, MAX_FILES } from './attachments';

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
