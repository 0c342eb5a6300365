// A real redis-server for tests: spawned on loopback on a free port with no persistence, ready once it answers
// PING, stoppable and restartable on the same port (an outage, or a restart that lost everything); always stopped.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, Socket } from 'node:net';

export interface TestRedisServer {
  port: number;
  url: string;
  /** Stops the server (SIGTERM, then SIGKILL); resolves once it has exited. */
  stop(): Promise<void>;
  /** Starts it again on the same port, empty (nothing is persisted). */
  start(): Promise<void>;
  /** Sends one command over a raw connection and resolves with the raw reply (e.g. FLUSHALL, INFO commandstats). */
  command(...args: string[]): Promise<string>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export async function startRedisServer(): Promise<TestRedisServer> {
  const port = await freePort();
  let child: ChildProcess | undefined;

  const start = async () => {
    const spawned = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child = spawned;
    running.add(spawned);
    spawned.once('exit', () => running.delete(spawned));
    let output = '';
    spawned.stdout?.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-2_000)));
    spawned.stderr?.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-2_000)));
    const deadline = Date.now() + 20_000;
    for (;;) {
      if (spawned.exitCode !== null)
        throw new Error(`redis-server exited (${spawned.exitCode}) on port ${port}: ${output}`);
      try {
        if ((await send(port, ['PING'])).startsWith('+PONG')) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`redis-server did not answer on port ${port}: ${output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  const stop = async () => {
    const current = child;
    child = undefined;
    if (current === undefined || current.exitCode !== null || current.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => current.once('exit', () => resolve()));
    current.kill('SIGTERM');
    const timer = setTimeout(() => current.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  };

  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    stop,
    start,
    command: (...args) => send(port, args),
  };
}

/** One command in RESP over a fresh socket; the reply is returned raw once the server has sent a complete one. */
function send(port: number, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = new Socket();
    let reply = '';
    socket.setTimeout(10_000, () => socket.destroy(new Error('redis-server did not reply')));
    socket.once('error', reject);
    socket.on('data', (chunk: Buffer) => {
      reply += chunk.toString('utf8');
      if (isComplete(reply)) {
        socket.end();
        resolve(reply);
      }
    });
    socket.connect(port, '127.0.0.1', () => {
      socket.write(
        `*${args.length}\r\n${args.map((arg) => `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`).join('')}`,
      );
    });
  });
}

/** Whether a raw reply is whole: a simple line, or a bulk string whose announced length has arrived. */
function isComplete(reply: string): boolean {
  const lineEnd = reply.indexOf('\r\n');
  if (lineEnd === -1) return false;
  if (!reply.startsWith('$')) return true;
  const length = Number(reply.slice(1, lineEnd));
  return length < 0 || Buffer.byteLength(reply) >= lineEnd + 2 + length + 2;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address !== null && typeof address === 'object') resolve(address.port);
        else reject(new Error('no free port'));
      });
    });
  });
}
