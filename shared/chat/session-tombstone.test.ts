// The tombstone of a deleted conversation outlives every message of it that can still be delivered: a
// message-completed event waits at most its subscription's time to live, then is delivered at most MAX_DELIVERY_COUNT
// times, each under a lock the host renews for up to maxAutoLockRenewalDuration (host.json).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MAX_DELIVERY_COUNT, SUBSCRIPTION_MESSAGE_TTL } from '../messaging/service-bus-entities.js';
import { chatContainers, SESSION_TOMBSTONE_TTL_SECONDS, SESSIONS_CONTAINER } from './contracts/documents.js';

const hostJson = JSON.parse(readFileSync(new URL('../../host.json', import.meta.url), 'utf8')) as {
  extensions: { serviceBus: { maxAutoLockRenewalDuration: string } };
};

/** hh:mm:ss → milliseconds. */
function timeSpanMs(span: string): number {
  const [hours = '0', minutes = '0', seconds = '0'] = span.split(':');
  return ((Number(hours) * 60 + Number(minutes)) * 60 + Number(seconds)) * 1000;
}

/** An ISO 8601 duration of whole days (PnD) → milliseconds. */
function daysMs(duration: string): number {
  const days = /^P(\d+)D$/.exec(duration)?.[1];
  if (days === undefined) throw new Error(`not a duration of whole days: ${duration}`);
  return Number(days) * 24 * 60 * 60 * 1000;
}

describe("a deleted conversation's tombstone", () => {
  it('outlives the longest time a message of the conversation can still be delivered', () => {
    const longestWaitMs =
      daysMs(SUBSCRIPTION_MESSAGE_TTL) +
      MAX_DELIVERY_COUNT * timeSpanMs(hostJson.extensions.serviceBus.maxAutoLockRenewalDuration);
    expect(longestWaitMs).toBe((7 * 24 + 5) * 60 * 60 * 1000);
    expect(SESSION_TOMBSTONE_TTL_SECONDS * 1000).toBeGreaterThan(longestWaitMs);
  });

  it('expires on its own: the sessions container lets items set their ttl, and sets none itself', () => {
    expect(chatContainers.find((spec) => spec.id === SESSIONS_CONTAINER)?.defaultTtlSeconds).toBe(-1);
  });
});
