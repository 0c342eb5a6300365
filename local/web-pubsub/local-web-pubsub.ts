// The local runtime's Azure Web PubSub: the REST API subset the app calls and the JSON client protocols,
// served in-process, so the real server and client SDKs work against it through a local connection string.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { z } from 'zod';
import { UnauthorizedError } from './rest-errors.js';
import type { AzureLatencyModel } from '../latency/azure-latency.js';
import { AccessTokens } from './access-tokens.js';
import type { ClientConnection, ClientKind, ClientTransport } from './client-connection.js';
import { handleClientFrame } from './client-frames.js';
import { delayedTransport } from './delayed-transport.js';
import { JSON_SUBPROTOCOL, RELIABLE_JSON_SUBPROTOCOL, disconnectedFrame } from './client-messages.js';
import { HubService, SESSION_ENDED } from './hub-service.js';
import { handleRestRequest, type RestContext } from './rest-api.js';

export interface LocalWebPubSubOptions {
  /** Any string; JWTs are HS256-signed with its UTF-8 bytes, as the SDK does. */
  accessKey: string;
  /** e.g. '/webpubsub': REST at `${pathPrefix}/api/...`, clients at `${pathPrefix}/client/hubs/{hub}`. */
  pathPrefix: string;
  /** How long a dropped reliable connection can be resumed (default 60_000). */
  reconnectGraceMs?: number;
  /** Answers REST calls and delivers frames as late as the service would (undefined: at once). */
  latency?: AzureLatencyModel | undefined;
}

const optionsSchema = z.object({
  accessKey: z
    .string()
    .min(1, 'accessKey must not be empty: pass the key the connection string will carry')
    .refine(
      (key) => !key.includes(';'),
      'accessKey must not contain ";" (it ends a connection string field)',
    ),
  pathPrefix: z
    .string()
    .transform((prefix) => prefix.replace(/\/+$/, ''))
    .pipe(
      z
        .string()
        .regex(
          /^(\/[A-Za-z0-9._~-]+)+$/,
          "pathPrefix must be a path such as '/webpubsub' (the REST API and client endpoint live under it)",
        ),
    ),
  reconnectGraceMs: z
    .number()
    .int()
    .positive('reconnectGraceMs must be a positive number of ms')
    .default(60_000),
});

// The service's limit for one message (REST body or client frame).
const maxMessageBytes = 1024 * 1024;
const hubName = /^[A-Za-z][A-Za-z0-9_`,.[\]]{0,127}$/;
const supportedSubprotocols = [RELIABLE_JSON_SUBPROTOCOL, JSON_SUBPROTOCOL];
const shutdownGraceMs = 500;

export class LocalWebPubSub {
  private readonly accessKey: string;
  private readonly prefix: string;
  private readonly tokens: AccessTokens;
  private readonly service: HubService;
  private readonly wss: WebSocketServer;
  private readonly sockets = new Set<WebSocket>();
  private readonly rest: RestContext;
  private readonly latency: AzureLatencyModel | undefined;
  private closed = false;
  /** REST calls served, for benchmarks: every call, and the sends among them with their body bytes. */
  private restStats = { restCalls: 0, sends: 0, sendBytes: 0 };

  constructor(options: LocalWebPubSubOptions) {
    const parsed = optionsSchema.safeParse(options);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new Error(
        `Invalid LocalWebPubSub option '${issue?.path.join('.') ?? ''}': ${issue?.message ?? ''}`,
      );
    }
    this.accessKey = parsed.data.accessKey;
    this.prefix = parsed.data.pathPrefix;
    this.tokens = new AccessTokens(this.accessKey);
    this.latency = options.latency;
    this.service = new HubService({ reconnectGraceMs: parsed.data.reconnectGraceMs });
    this.wss = new WebSocketServer({
      noServer: true,
      maxPayload: maxMessageBytes,
      handleProtocols: (protocols) => supportedSubprotocols.find((p) => protocols.has(p)) ?? false,
    });
    this.rest = {
      service: this.service,
      tokens: this.tokens,
      maxBodyBytes: maxMessageBytes,
      requestAudiences: (req) => originsOf(req).map((origin) => `${origin}${req.url ?? ''}`),
    };
  }

  /** Serves REST requests under pathPrefix; resolves false (untouched) when the path is not under it. */
  async handleRequest(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    const url = requestUrl(req);
    const path = url && this.pathUnderPrefix(url.pathname);
    if (path === undefined) return false;
    if (path.startsWith('/api/')) {
      this.countRestCall(req, path);
      await this.latency?.delay('web-pubsub.rest');
      await handleRestRequest(req, res, path.slice('/api/'.length), this.rest);
    } else if (path.startsWith('/client/')) {
      plainError(res, 426, 'UpgradeRequired', 'The client endpoint accepts WebSocket connections only.');
    } else {
      plainError(
        res,
        404,
        'NotFound',
        `Nothing at '${url!.pathname}': the REST API is under '${this.prefix}/api/'.`,
      );
    }
    return true;
  }

  /** Clears the REST calls and delivered messages counted so far (the open connections stay counted). */
  resetStats(): void {
    this.restStats = { restCalls: 0, sends: 0, sendBytes: 0 };
    this.service.resetDelivered();
  }

  private countRestCall(req: IncomingMessage, path: string): void {
    this.restStats.restCalls += 1;
    if (req.method !== 'POST' || !path.endsWith('/:send')) return;
    this.restStats.sends += 1;
    this.restStats.sendBytes += Number(req.headers['content-length'] ?? 0) || 0;
  }

  /** Accepts WebSocket upgrades under `${pathPrefix}/client/hubs/{hub}`; returns false when not its path. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    const url = requestUrl(req);
    const path = url && this.pathUnderPrefix(url.pathname);
    if (path === undefined) return false;
    // Until ws takes the socket over, a client reset must not become an unhandled 'error'.
    socket.on('error', () => undefined);
    const match = /^\/client\/hubs\/([^/]+)\/?$/.exec(path);
    const hub = match ? safeDecode(match[1]!) : undefined;
    if (this.closed) {
      refuseUpgrade(socket, 503, 'The local Web PubSub is shutting down.');
    } else if (!match) {
      refuseUpgrade(socket, 404, `No client endpoint here: connect to '${this.prefix}/client/hubs/{hub}'.`);
    } else if (hub === undefined || !hubName.test(hub)) {
      refuseUpgrade(socket, 400, `Hub '${match[1]!}' is not a valid hub name.`);
    } else if (!offersSupportedSubprotocol(req)) {
      refuseUpgrade(
        socket,
        400,
        `Connect with one of the subprotocols ${supportedSubprotocols.join(', ')}: the local Web PubSub serves no other clients.`,
      );
    } else {
      this.acceptClient(req, socket, head, hub, url!).catch((error: unknown) => {
        console.error('Local Web PubSub could not accept a client', error);
        refuseUpgrade(socket, 500, 'The local Web PubSub failed to accept the connection.');
      });
    }
    return true;
  }

  /** Connection string for an app that reaches this service at baseUrl (e.g. 'http://127.0.0.1:7071'). */
  connectionString(baseUrl: string): string {
    const base = new URL(baseUrl);
    const endpoint = `${base.origin}${base.pathname.replace(/\/+$/, '')}${this.prefix}`;
    return `Endpoint=${endpoint};AccessKey=${this.accessKey};Version=1.0;`;
  }

  /**
   * Open client sockets (tests wait on it), and the REST calls served since start or the last resetStats():
   * `sends` are the `:send` calls (one message each), `sendBytes` their bodies; `deliveredMessages` the messages
   * delivered to connections and `deliveredMessageUnits` their 2 KB units, which Azure bills (benchmarks read these).
   */
  stats(): {
    connections: number;
    restCalls: number;
    sends: number;
    sendBytes: number;
    deliveredMessages: number;
    deliveredMessageUnits: number;
  } {
    return { ...this.service.stats(), ...this.restStats };
  }

  /** Test hook: the ids of the connections the service holds (with a socket or waiting for a resume). */
  connectionIds(): string[] {
    return this.service.connectionIds();
  }

  /** Test hook: drop a connection abruptly (no close frame), as a network failure would. */
  dropConnection(connectionId: string): void {
    if (!this.service.drop(connectionId))
      throw new Error(`No Web PubSub connection '${connectionId}' to drop.`);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.service.shutdown('The service is shutting down.');
    await waitUntilClosed(this.sockets, shutdownGraceMs);
    for (const socket of this.sockets) socket.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  // --- client connections ----------------------------------------------------------------------------------

  private async acceptClient(req: IncomingMessage, socket: Duplex, head: Buffer, hub: string, url: URL) {
    const resumeId = url.searchParams.get('awps_connection_id');
    if (resumeId !== null) {
      const token = url.searchParams.get('awps_reconnection_token') ?? '';
      this.upgrade(req, socket, head, (ws, kind) => {
        const transport = this.transportOf(ws);
        const result = this.service.resume(hub, resumeId, token, kind, transport);
        if (!result.ok) {
          // Close code 1008 tells the client to stop recovering and start a new connection.
          ws.send(disconnectedFrame(result.reason));
          ws.close(SESSION_ENDED, 'Connection cannot be resumed');
          return;
        }
        this.bind(ws, result.connection, transport);
      });
      return;
    }

    const token = url.searchParams.get('access_token') ?? bearerToken(req);
    if (!token) {
      refuseUpgrade(
        socket,
        401,
        'Missing access token: connect with ?access_token=<token from getClientAccessToken>.',
      );
      return;
    }
    const audiences = originsOf(req).map((origin) => `${origin}${url.pathname}`);
    let claims;
    try {
      claims = await this.tokens.verifyClientToken(token, audiences);
    } catch (error) {
      if (!(error instanceof UnauthorizedError)) throw error;
      refuseUpgrade(socket, 401, error.message);
      return;
    }
    if (socket.destroyed) return;
    this.upgrade(req, socket, head, (ws, kind) => {
      const transport = this.transportOf(ws);
      const { userId, roles, groups } = claims;
      const connection = this.service.open({ hub, kind, userId, roles, groups }, transport);
      this.bind(ws, connection, transport);
    });
  }

  private upgrade(
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    onOpen: (ws: WebSocket, kind: ClientKind) => void,
  ): void {
    if (this.closed) {
      refuseUpgrade(socket, 503, 'The local Web PubSub is shutting down.');
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      this.sockets.add(ws);
      ws.once('close', () => this.sockets.delete(ws));
      onOpen(ws, kindOf(ws.protocol));
    });
  }

  private bind(ws: WebSocket, connection: ClientConnection, transport: ClientTransport): void {
    ws.on('message', (data: RawData) => {
      if (!connection.isCurrent(transport)) return;
      try {
        handleClientFrame(this.service, connection, rawText(data));
      } catch (error) {
        console.error('Local Web PubSub failed to handle a client frame', error);
        this.service.disconnect(connection, 'Internal server error.');
      }
    });
    ws.on('close', () => this.service.socketClosed(connection, transport));
    ws.on('error', () => undefined);
  }

  private transportOf(ws: WebSocket): ClientTransport {
    const latency = this.latency;
    const transport = transportOf(ws);
    return latency === undefined
      ? transport
      : delayedTransport(transport, () => latency.draw('web-pubsub.delivery'));
  }

  private pathUnderPrefix(pathname: string): string | undefined {
    if (pathname === this.prefix) return '';
    return pathname.startsWith(`${this.prefix}/`) ? pathname.slice(this.prefix.length) : undefined;
  }
}

function transportOf(ws: WebSocket): ClientTransport {
  return {
    send: (frame) => {
      if (ws.readyState === WebSocket.OPEN) ws.send(frame);
    },
    close: (code, reason) => ws.close(code, reason),
    terminate: () => ws.terminate(),
  };
}

/** The upgrade offered a supported subprotocol, so ws picked one of the two. */
function kindOf(protocol: string): ClientKind {
  return protocol === RELIABLE_JSON_SUBPROTOCOL ? 'reliable' : 'json';
}

function offersSupportedSubprotocol(req: IncomingMessage): boolean {
  const header = req.headers['sec-websocket-protocol'] ?? '';
  return header.split(',').some((p) => supportedSubprotocols.includes(p.trim()));
}

/** The origins a client could have used to reach this request (tokens are signed for http or https URLs). */
function originsOf(req: IncomingMessage): string[] {
  const host = req.headers.host;
  return host ? [`http://${host}`, `https://${host}`] : [];
}

function requestUrl(req: IncomingMessage): URL | undefined {
  try {
    return new URL(req.url ?? '/', 'http://local');
  } catch {
    return undefined;
  }
}

function bearerToken(req: IncomingMessage): string | undefined {
  return /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
}

function safeDecode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

function rawText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data as ArrayBuffer).toString('utf8');
}

function refuseUpgrade(socket: Duplex, status: number, message: string): void {
  if (socket.destroyed) return;
  const body = `${message}\n`;
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n` +
      'Connection: close\r\n' +
      'Content-Type: text/plain; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

function plainError(res: ServerResponse, status: number, code: string, message: string): void {
  const body = JSON.stringify({ code, message });
  res
    .writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'x-ms-error-code': code })
    .end(body);
}

async function waitUntilClosed(sockets: ReadonlySet<WebSocket>, timeoutMs: number): Promise<void> {
  const closing = [...sockets].map((ws) => new Promise<void>((resolve) => ws.once('close', () => resolve())));
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
  await Promise.race([Promise.all(closing), timeout]);
  clearTimeout(timer);
}
