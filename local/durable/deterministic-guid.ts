// Replay-safe GUIDs for context.df.newGuid: the same name-based UUID (RFC 4122 §4.3, SHA-1) that
// durable-functions computes, so an instance gets the same ids locally as in Azure.
import { createHash } from 'node:crypto';

/** The namespace durable-functions uses for newGuid. */
const DURABLE_NAMESPACE = '9e952958-5e33-4daf-827f-2fa12937b875';

/**
 * durable-functions hashes the name with SHA-1, then calls uuid's v5(namespace, digest) with the two
 * arguments swapped: the 16-byte digest acts as the namespace and the namespace text as the name. The
 * same bytes are hashed here so the GUIDs match.
 */
export function deterministicGuid(name: string): string {
  const nameDigest = createHash('sha1').update(name, 'utf8').digest().subarray(0, 16);
  const bytes = createHash('sha1')
    .update(nameDigest)
    .update(DURABLE_NAMESPACE, 'utf8')
    .digest()
    .subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** The name durable-functions derives for the n-th newGuid call of an episode. */
export function newGuidName(input: string, currentUtcDateTime: Date, counter: number): string {
  return `${input}_${currentUtcDateTime.valueOf()}_${counter}`;
}
