// Commands between a thread and the worker thread it started: asynchronous ones over the worker's own port, and
// synchronous ones (a reading the caller needs at once, such as counters) on a channel of their own while the
// caller waits on a shared flag: the worker answers from its own event loop, so the wait is short.
import { MessageChannel, receiveMessageOnPort, type MessagePort, type Worker } from 'node:worker_threads';

/** What the caller gives the worker (in its workerData) for synchronous calls. */
export interface SyncCallPort {
  port: MessagePort;
  /** Int32 over a SharedArrayBuffer: 1 once an answer is posted. */
  flag: Int32Array;
}

interface Command {
  id: number;
  command: string;
  args?: unknown;
}

interface Answer {
  id: number;
  ok: boolean;
  value?: unknown;
  error?: TransferredError;
}

/** An error as it crosses threads: its class is lost on the way, so the fields that rebuild it travel with it. */
export interface TransferredError {
  name: string;
  message: string;
  stack?: string | undefined;
  /** A data file's path, for CorruptDataFileError. */
  file?: string | undefined;
}

export function transferError(error: unknown): TransferredError {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error) };
  const file = (error as { file?: unknown }).file;
  return {
    name: error.name,
    message: error.message,
    stack: error.stack,
    ...(typeof file === 'string' ? { file } : {}),
  };
}

/** How long a synchronous call may wait for the worker before it fails. */
const SYNC_CALL_TIMEOUT_MS = 30_000;

/** The caller's side: commands to a worker, each answered once. */
export class WorkerCalls {
  readonly #pending = new Map<
    number,
    { resolve: (value: unknown) => void; reject: (error: Error) => void }
  >();
  readonly #syncPort: MessagePort;
  readonly #flag = new Int32Array(new SharedArrayBuffer(4));
  #nextId = 1;
  #failure: Error | undefined;
  #worker: Worker | undefined;

  /** The port for the worker's workerData (and its transferList). */
  readonly workerPort: SyncCallPort;

  constructor(private readonly rebuildError: (error: TransferredError) => Error) {
    const channel = new MessageChannel();
    this.#syncPort = channel.port1;
    this.workerPort = { port: channel.port2, flag: this.#flag };
  }

  /** The worker to call, once started with `workerPort` in its workerData. */
  attach(worker: Worker): void {
    this.#worker = worker;
  }

  /** Routes one of the worker's messages; false when it is not an answer. */
  receive(message: unknown): boolean {
    if (!isAnswer(message)) return false;
    const pending = this.#pending.get(message.id);
    this.#pending.delete(message.id);
    if (message.ok) pending?.resolve(message.value);
    else pending?.reject(this.rebuildError(message.error ?? { name: 'Error', message: 'failed' }));
    return true;
  }

  call<T>(command: string, args?: unknown): Promise<T> {
    const worker = this.#worker;
    if (this.#failure || !worker)
      return Promise.reject(this.#failure ?? new Error('the worker has not started'));
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { resolve: (value) => resolve(value as T), reject });
      worker.postMessage({ id, command, args } satisfies Command);
    });
  }

  /** Blocks this thread until the worker answers (for readings only: a handler must not wait on this thread). */
  callSync<T>(command: string): T {
    if (this.#failure) throw this.#failure;
    const id = this.#nextId++;
    Atomics.store(this.#flag, 0, 0);
    this.#syncPort.postMessage({ id, command } satisfies Command);
    if (Atomics.wait(this.#flag, 0, 0, SYNC_CALL_TIMEOUT_MS) === 'timed-out')
      throw new Error(`the worker did not answer "${command}" within ${SYNC_CALL_TIMEOUT_MS} ms`);
    const received = receiveMessageOnPort(this.#syncPort)?.message as unknown;
    if (!isAnswer(received) || received.id !== id)
      throw new Error(`no answer to "${command}" from the worker`);
    if (!received.ok) throw this.rebuildError(received.error ?? { name: 'Error', message: 'failed' });
    return received.value as T;
  }

  /** The worker is gone: every call under way and every later one fails with `error`. */
  fail(error: Error): void {
    this.#failure ??= error;
    for (const { reject } of this.#pending.values()) reject(error);
    this.#pending.clear();
  }

  close(): void {
    this.#syncPort.close();
  }
}

type Handlers = Record<string, (args: unknown) => unknown>;

/** The worker's side: answers commands from `post`'s thread with `handlers`, and synchronous ones on `sync`. */
export function serveCalls(
  on: (listener: (message: unknown) => void) => void,
  post: (message: unknown) => void,
  sync: SyncCallPort,
  handlers: Handlers,
): void {
  const answer = async (command: Command): Promise<Answer> => {
    try {
      const handler = handlers[command.command];
      if (!handler) throw new Error(`unknown command "${command.command}"`);
      return { id: command.id, ok: true, value: await handler(command.args) };
    } catch (error) {
      return { id: command.id, ok: false, error: transferError(error) };
    }
  };
  on((message) => {
    if (isCommand(message)) void answer(message).then(post);
  });
  sync.port.on('message', (message: unknown) => {
    if (!isCommand(message)) return;
    let reply: Answer;
    try {
      const handler = handlers[message.command];
      if (!handler) throw new Error(`unknown command "${message.command}"`);
      reply = { id: message.id, ok: true, value: handler(message.args) };
    } catch (error) {
      reply = { id: message.id, ok: false, error: transferError(error) };
    }
    sync.port.postMessage(reply);
    Atomics.store(sync.flag, 0, 1);
    Atomics.notify(sync.flag, 0);
  });
}

function isCommand(message: unknown): message is Command {
  return typeof message === 'object' && message !== null && 'command' in message && 'id' in message;
}

function isAnswer(message: unknown): message is Answer {
  return typeof message === 'object' && message !== null && 'ok' in message && 'id' in message;
}
