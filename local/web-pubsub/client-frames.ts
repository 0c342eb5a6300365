// Answers the frames a JSON-subprotocol client sends: group join/leave/publish checked against its roles,
// ackIds answered once (a resent ackId gets `Duplicate`), sequence acks, pings, and upstream events - which
// fail, because the local service has no event handler configured.
import { ValidationError } from '../../shared/errors.js';
import type { ClientConnection } from './client-connection.js';
import {
  ackFrame,
  invokeErrorFrame,
  parseClientFrame,
  pongFrame,
  type AckErrorName,
} from './client-messages.js';
import type { HubService } from './hub-service.js';
import { payloadFromClientFrame, type Payload } from './payload.js';
import { hasPermission } from './permissions.js';

type AckError = { name: AckErrorName; message: string } | undefined;

export function handleClientFrame(service: HubService, connection: ClientConnection, text: string): void {
  const parsed = parseClientFrame(text);
  if (!parsed.ok) {
    // The service declines a client whose frame does not match the protocol.
    service.disconnect(connection, `Invalid message: ${parsed.reason}`);
    return;
  }
  const frame = parsed.frame;
  switch (frame.type) {
    case 'ping':
      connection.sendControl(pongFrame());
      return;
    case 'sequenceAck':
      if (connection.kind === 'reliable') connection.acknowledge(frame.sequenceId);
      return;
    case 'joinGroup':
      answer(connection, frame.ackId, () => {
        if (!hasPermission(connection.roles, 'joinLeaveGroup', frame.group)) {
          return forbidden(`The connection has no permission to join group '${frame.group}'.`);
        }
        service.join(connection, frame.group);
        return undefined;
      });
      return;
    case 'leaveGroup':
      answer(connection, frame.ackId, () => {
        if (!hasPermission(connection.roles, 'joinLeaveGroup', frame.group)) {
          return forbidden(`The connection has no permission to leave group '${frame.group}'.`);
        }
        service.leave(connection, frame.group);
        return undefined;
      });
      return;
    case 'sendToGroup': {
      const payload = readPayload(service, connection, frame);
      if (!payload) return;
      answer(connection, frame.ackId, () => {
        if (!hasPermission(connection.roles, 'sendToGroup', frame.group)) {
          return forbidden(`The connection has no permission to send to group '${frame.group}'.`);
        }
        service.publishFromClient(connection, frame.group, payload, frame.noEcho ?? false);
        return undefined;
      });
      return;
    }
    case 'event': {
      if (!readPayload(service, connection, frame)) return;
      answer(connection, frame.ackId, () => ({
        name: 'InternalServerError',
        message: noUpstream(frame.event, connection.hub),
      }));
      return;
    }
    case 'invoke':
      connection.sendControl(
        invokeErrorFrame(
          frame.invocationId,
          'InternalServerError',
          noUpstream(frame.event ?? '', connection.hub),
        ),
      );
      return;
    case 'cancelInvocation':
      return;
  }
}

/** Runs a request and, when the client asked for one, acks it; only successful requests count as processed. */
function answer(connection: ClientConnection, ackId: number | undefined, run: () => AckError): void {
  if (ackId !== undefined && connection.wasProcessed(ackId)) {
    connection.sendControl(
      ackFrame(ackId, { name: 'Duplicate', message: `Message with ack-id: ${ackId} has been processed.` }),
    );
    return;
  }
  const error = run();
  if (ackId === undefined) return;
  if (!error) connection.markProcessed(ackId);
  connection.sendControl(ackFrame(ackId, error));
}

function readPayload(
  service: HubService,
  connection: ClientConnection,
  frame: { dataType?: string | undefined; data?: unknown },
): Payload | undefined {
  try {
    return payloadFromClientFrame(frame.dataType, frame.data);
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    service.disconnect(connection, `Invalid message: ${error.message}`);
    return undefined;
  }
}

function forbidden(message: string): AckError {
  return { name: 'Forbidden', message };
}

function noUpstream(event: string, hub: string): string {
  return `No event handler is configured for event '${event}' of hub '${hub}': the local Web PubSub has no upstream.`;
}
