import azureFunctions from '@azure/functions';
import { describe, expect, it } from 'vitest';
import {
  newtonsoftDate,
  toTriggerInvocation,
  toTriggerMetadata,
  type ReceivedMessage,
} from './trigger-invocation.js';

const message: ReceivedMessage = {
  body: { n: 1 },
  messageId: 'm-1',
  applicationProperties: {},
  deliveryCount: 1,
  sequenceNumber: 5,
  enqueuedTimeUtc: new Date(Date.UTC(2025, 0, 2, 3, 4, 5, 0)),
  lockToken: '6a2f41a3-c54c-fce8-32d2-0324e1c32e22',
};
const sys = { functionName: 'worker', utcNow: new Date(Date.UTC(2025, 0, 2, 3, 4, 6, 500)), randGuid: 'g' };

function metadataFor(overrides: Partial<ReceivedMessage>): Record<string, unknown> {
  const received = { ...message, ...overrides };
  return toTriggerMetadata(received, JSON.stringify(received.body), sys);
}

describe('newtonsoftDate', () => {
  it('writes the fraction without trailing zeros and the zone of the .NET type', () => {
    expect(newtonsoftDate(new Date(Date.UTC(2025, 0, 2, 3, 4, 5, 0)), '')).toBe('2025-01-02T03:04:05');
    expect(newtonsoftDate(new Date(Date.UTC(2025, 0, 2, 3, 4, 5, 120)), '+00:00')).toBe(
      '2025-01-02T03:04:05.12+00:00',
    );
    expect(newtonsoftDate(new Date(Date.UTC(2025, 0, 2, 3, 4, 5, 7)), 'Z')).toBe('2025-01-02T03:04:05.007Z');
  });
});

describe('toTriggerMetadata', () => {
  it('leaves out fields the message does not have and always lists the (empty) properties', () => {
    expect(metadataFor({})).toEqual({
      deliveryCount: 1,
      lockToken: message.lockToken,
      expiresAtUtc: '9999-12-31T23:59:59.9999999',
      expiresAt: '9999-12-31T23:59:59.9999999+00:00',
      enqueuedTimeUtc: '2025-01-02T03:04:05',
      enqueuedTime: '2025-01-02T03:04:05+00:00',
      messageId: 'm-1',
      sequenceNumber: 5,
      applicationProperties: {},
      userProperties: {},
      sys: { methodName: 'worker', utcNow: '2025-01-02T03:04:06.5Z', randGuid: 'g' },
      n: 1,
    });
  });

  it('parses string values that are JSON, as the Node worker does', () => {
    const metadata = metadataFor({
      messageId: '42',
      sessionId: 'true',
      correlationId: '{"a":1}',
      subject: 'chat',
    });
    expect(metadata).toMatchObject({
      messageId: 42,
      sessionId: true,
      correlationId: { a: 1 },
      subject: 'chat',
    });
  });

  it('merges the top-level properties of an object body as the host converts them', () => {
    const metadata = metadataFor({
      body: {
        MessageId: 'from-body',
        flag: true,
        count: 3,
        code: '7',
        list: [1],
        nothing: null,
        Inner: { Deep: { X: 1 } },
      },
    });
    expect(metadata).toMatchObject({
      messageId: 'from-body',
      flag: 'True',
      count: 3,
      code: 7,
      inner: { deep: { x: 1 } },
    });
    expect(metadata).not.toHaveProperty('list');
    expect(metadata).not.toHaveProperty('nothing');
  });

  it('merges nothing from a body that is not a JSON object', () => {
    expect(Object.keys(metadataFor({ body: ['a'] }))).not.toContain('0');
    expect(metadataFor({ body: 'text' })).not.toHaveProperty('n');
  });

  it('lower-cases the first letter of application property keys', () => {
    const metadata = metadataFor({ applicationProperties: { Kind: 'user', $Trace: 'x', retries: 2 } });
    expect(metadata.applicationProperties).toEqual({ kind: 'user', $Trace: 'x', retries: 2 });
  });
});

describe('toTriggerInvocation', () => {
  it('builds a real InvocationContext with the given ids and the body as the worker decodes it', () => {
    const logged: unknown[][] = [];
    const { trigger, context } = toTriggerInvocation({ ...message, body: 'plain' }, 'worker', {
      invocationId: 'inv-1',
      trigger: { type: 'serviceBusTrigger', name: 'serviceBusTrigger123', direction: 'in' },
      logHandler: (level, ...args) => logged.push([level, ...args]),
      now: () => Date.UTC(2025, 0, 1),
      newGuid: () => 'guid-1',
    });
    context.warn('careful');

    expect(trigger).toBe('plain');
    expect(context).toBeInstanceOf(azureFunctions.InvocationContext);
    expect(context.invocationId).toBe('inv-1');
    expect(context.options.trigger.name).toBe('serviceBusTrigger123');
    expect(context.triggerMetadata?.sys).toEqual({
      methodName: 'worker',
      utcNow: '2025-01-01T00:00:00Z',
      randGuid: 'guid-1',
    });
    expect(context.traceContext?.traceParent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
    expect(logged).toEqual([['warning', 'careful']]);
  });

  it('gives the handler its own copy of the body', () => {
    const body = { nested: { n: 1 } };
    const { trigger } = toTriggerInvocation({ ...message, body }, 'worker');
    expect(trigger).toEqual(body);
    expect(trigger).not.toBe(body);
  });
});
