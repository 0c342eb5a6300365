import { describe, expect, it } from 'vitest';
import { fileNameOf } from './download-conversation';

describe('fileNameOf', () => {
  it('reads the quoted name the History API sends', () => {
    expect(fileNameOf('attachment; filename="Trip to Lisbon.md"')).toBe('Trip to Lisbon.md');
  });

  it('prefers the UTF-8 encoded name when both are given', () => {
    expect(fileNameOf(`attachment; filename="x.md"; filename*=UTF-8''Caf%C3%A9%20plan.md`)).toBe(
      'Café plan.md',
    );
  });

  it('falls back to the plain name when the encoded one is malformed', () => {
    expect(fileNameOf(`attachment; filename*=UTF-8''%E0%A4%A; filename="plain.md"`)).toBe('plain.md');
  });

  it('gives nothing without a header or a name', () => {
    expect(fileNameOf(null)).toBeUndefined();
    expect(fileNameOf('attachment')).toBeUndefined();
  });
});
