// Message payloads as Web PubSub carries them: the three data types a REST body or a client frame can hold,
// and how each is written to a subprotocol client (JSON envelope, binary as base64) or a simple client (raw frame).
import { AppError, ValidationError } from '../../shared/errors.js';

export type DataType = 'text' | 'json' | 'binary';

export type Payload =
  | { dataType: 'text'; data: string }
  | { dataType: 'json'; data: unknown }
  | { dataType: 'binary'; data: Buffer };

/** The JSON envelope fields of a data message: binary travels as base64 text. */
export interface WireData {
  dataType: DataType;
  data: unknown;
}

const base64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Reads a REST send body the way the service does: its Content-Type decides the data type. */
export function payloadFromHttpBody(contentType: string | undefined, body: Buffer): Payload {
  const mediaType = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  switch (mediaType) {
    case 'text/plain':
      return { dataType: 'text', data: body.toString('utf8') };
    case 'application/json': {
      try {
        return { dataType: 'json', data: JSON.parse(body.toString('utf8')) as unknown };
      } catch {
        throw new ValidationError('The request body is not valid JSON (Content-Type: application/json).');
      }
    }
    case 'application/octet-stream':
      return { dataType: 'binary', data: body };
    default:
      throw new AppError(
        'unsupported_media_type',
        `Content-Type '${mediaType || '(none)'}' is not supported: send text/plain, application/json or application/octet-stream.`,
        415,
      );
  }
}

/** Reads the `dataType`/`data` pair of a client's sendToGroup or event frame (`json` when dataType is absent). */
export function payloadFromClientFrame(dataType: string | undefined, data: unknown): Payload {
  switch (dataType ?? 'json') {
    case 'json':
      return { dataType: 'json', data: data ?? null };
    case 'text':
      if (typeof data !== 'string') throw new ValidationError("dataType 'text' needs a string in 'data'.");
      return { dataType: 'text', data };
    case 'binary':
      if (typeof data !== 'string' || !base64.test(data)) {
        throw new ValidationError("dataType 'binary' needs base64 text in 'data'.");
      }
      return { dataType: 'binary', data: Buffer.from(data, 'base64') };
    default:
      throw new ValidationError(`dataType '${String(dataType)}' is not supported by the JSON subprotocols.`);
  }
}

export function toWireData(payload: Payload): WireData {
  return payload.dataType === 'binary'
    ? { dataType: 'binary', data: payload.data.toString('base64') }
    : { dataType: payload.dataType, data: payload.data };
}

/** What a simple (no subprotocol) client receives: the bare data, JSON serialised, binary as a binary frame. */
export function toSimpleFrame(payload: Payload): string | Buffer {
  switch (payload.dataType) {
    case 'text':
      return payload.data;
    case 'json':
      return JSON.stringify(payload.data);
    case 'binary':
      return payload.data;
  }
}
