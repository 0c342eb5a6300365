// Answers the frames a JSON-subprotocol client sends: sequence acks and pings are served; group requests are
// refused with `Forbidden`, as the service refuses them to the app's clients (whose tokens grant no roles); and
// upstream events fail, because the local service has no event handler.
import type { ClientConnection } from './client-connection.js';
import { ackErrorFrame, invokeErrorFrame, parseClientFrame, pongFrame } from './client-messages.js';
import type { HubService } from './hub-service.js';

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
    case 'leaveGroup':
    case 'sendToGroup':
      // Without an ackId the client asked for no answer, and the service sends none.
      if (frame.ackId !== undefined) {
        connection.sendControl(
          ackErrorFrame(
            frame.ackId,
            'Forbidden',
            `The connection has no permission to ${frame.type} '${frame.group}': the local Web PubSub grants no group permissions.`,
          ),
        );
      }
      return;
    case 'event':
      if (frame.ackId !== undefined) {
        connection.sendControl(
          ackErrorFrame(frame.ackId, 'InternalServerError', noUpstream(frame.event, connection.hub)),
        );
      }
      return;
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

function noUpstream(event: string, hub: string): string {
  return `No event handler is configured for event '${event}' of hub '${hub}': the local Web PubSub has no upstream.`;
}
