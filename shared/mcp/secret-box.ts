// Seals and opens header values (API keys) of users' MCP servers: AES-256-GCM under the app's key, a fresh
// 96-bit IV per value, the server's id as associated data so a sealed value copied onto another server fails.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { AppError } from '../errors.js';
import type { SealedValue } from './contracts.js';

/** No key is set, or the stored value was sealed under another key: the operator has to act. */
export class SecretsKeyError extends AppError {
  constructor(message: string) {
    super('secrets_key', message, 503);
  }
}

export interface SecretBox {
  seal(value: string, context: string): SealedValue;
  open(sealed: SealedValue, context: string): string;
}

function keyIdOf(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

export function createSecretBox(key: Buffer | undefined): SecretBox {
  const missing = () =>
    new SecretsKeyError(
      'This service has no MCP_SECRETS_KEY, so it cannot keep header values: ask the operator to set it.',
    );
  if (key !== undefined && key.length !== 32) throw new Error('An AES-256-GCM key is 32 bytes.');
  const keyId = key === undefined ? undefined : keyIdOf(key);
  return {
    seal(value, context) {
      if (key === undefined) throw missing();
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const data = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
      return {
        keyId: keyId ?? '',
        iv: iv.toString('base64'),
        tag: cipher.getAuthTag().toString('base64'),
        data: data.toString('base64'),
      };
    },
    open(sealed, context) {
      if (key === undefined) throw missing();
      if (sealed.keyId !== keyId)
        throw new SecretsKeyError(
          'A header value of this MCP server was sealed under another MCP_SECRETS_KEY: set its headers again.',
        );
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.iv, 'base64'));
        decipher.setAAD(Buffer.from(context, 'utf8'));
        decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
        return Buffer.concat([
          decipher.update(Buffer.from(sealed.data, 'base64')),
          decipher.final(),
        ]).toString('utf8');
      } catch {
        throw new SecretsKeyError('A header value of this MCP server does not open: set its headers again.');
      }
    },
  };
}
