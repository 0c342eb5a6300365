// Answers the frames a JSON-subprotocol client sends, as the service does: acks and pings served, group joins
// and leaves as the token's roles allow, sends to groups and upstream events refused.
import type { ClientConnection } from './client-connection.js';
import { ackErrorFrame, ackFrame, invokeErrorFrame, parseClientFrame, pongFrame } from './client-messages.js';
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
    case 'leaveGroup': {
      const allowed = connection.mayJoinOrLeave(frame.group);
      if (allowed && frame.type === 'joinGroup')
        service.addToGroup(connection.hub, frame.group, connection.id);
      if (allowed && frame.type === 'leaveGroup')
        service.removeFromGroup(connection.hub, frame.group, connection.id);
      // Without an ackId the client asked for no answer, and the service sends none.
      if (frame.ackId === undefined) return;
      connection.sendControl(
        allowed
          ? ackFrame(frame.ackId)
          : ackErrorFrame(
              frame.ackId,
              'Forbidden',
              `The connection has no permission to ${frame.type} '${frame.group}': its token needs the role 'webpubsub.joinLeaveGroup' or 'webpubsub.joinLeaveGroup.${frame.group}'.`,
            ),
      );
      return;
    }
    case 'sendToGroup':
      // Without an ackId the client asked for no answer, and the service sends none.
      if (frame.ackId !== undefined) {
        connection.sendControl(
          ackErrorFrame(
            frame.ackId,
            'Forbidden',
            `The connection has no permission to sendToGroup '${frame.group}': the local Web PubSub lets no client send to groups.`,
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
