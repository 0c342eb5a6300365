import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSecretBox, SecretsKeyError } from './secret-box.js';

describe('the secret box', () => {
  const box = createSecretBox(randomBytes(32));

  it('opens what it sealed, and the sealed form does not hold the value', () => {
    const sealed = box.seal('Bearer sk-live-123456', 'mcp-0123456789abcdef');
    expect(JSON.stringify(sealed)).not.toContain('sk-live');
    expect(box.open(sealed, 'mcp-0123456789abcdef')).toBe('Bearer sk-live-123456');
  });

  it('seals the same value differently each time', () => {
    expect(box.seal('k', 'a').data).not.toBe(box.seal('k', 'a').data);
  });

  it('refuses a value moved to another server, altered, or sealed under another key', () => {
    const sealed = box.seal('secret', 'mcp-0123456789abcdef');
    expect(() => box.open(sealed, 'mcp-fedcba9876543210')).toThrow(SecretsKeyError);
    const flipped = Buffer.from(sealed.data, 'base64');
    flipped[0] = (flipped[0] ?? 0) ^ 1;
    expect(() => box.open({ ...sealed, data: flipped.toString('base64') }, 'mcp-0123456789abcdef')).toThrow(
      SecretsKeyError,
    );
    expect(() => createSecretBox(randomBytes(32)).open(sealed, 'mcp-0123456789abcdef')).toThrow(/another/);
  });

  it('without a key, says the operator must set one', () => {
    expect(() => createSecretBox(undefined).seal('x', 'y')).toThrow(/MCP_SECRETS_KEY/);
  });
});
