// The benchmark's helper processes (the local runtime, the model) and how it talks to them: each child answers
// named commands over Node's IPC channel, so the runtime's CPU time is its own and not the clients'.
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

type Handlers = Record<string, (args: unknown) => unknown>;

interface Reply {
  id: number;
  ok: boolean;
  value?: unknown;
  error?: string;
}

type ChildMessage = { ready: unknown } | { failed: string } | Reply;

/** A child process started from a TypeScript file of bench/, and the commands it answers. */
export class BenchChild<Ready> {
  readonly #pending = new Map<
    number,
    { resolve: (value: unknown) => void; reject: (error: Error) => void }
  >();
  #nextId = 0;
  #exited = false;

  private constructor(
    readonly label: string,
    private readonly child: ChildProcess,
    readonly ready: Ready,
  ) {
    child.on('message', (message: ChildMessage) => {
      if (!('id' in message)) return;
      const pending = this.#pending.get(message.id);
      this.#pending.delete(message.id);
      if (message.ok) pending?.resolve(message.value);
      else pending?.reject(new Error(`${label}: ${message.error ?? 'command failed'}`));
    });
    // A send to a child that has just died fails through the send callback; this only keeps it from throwing.
    child.on('error', () => undefined);
    child.once('exit', (code) => {
      this.#exited = true;
      for (const { reject } of this.#pending.values()) reject(new Error(`${label} exited (${code})`));
      this.#pending.clear();
    });
  }

  /** Starts `bench/<file>` with tsx, passing options as JSON, and waits for its ready message. */
  static start<Ready>(file: string, label: string, options: unknown): Promise<BenchChild<Ready>> {
    const child = fork(fileURLToPath(new URL(file, import.meta.url)), [], {
      // BENCH_CPU_PROF_DIR=<folder> writes a V8 CPU profile of each child (runtime, model) there on exit.
      execArgv: [
        '--import',
        'tsx',
        ...(process.env.BENCH_CPU_PROF_DIR
          ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF_DIR}`]
          : []),
      ],
      env: { ...process.env, BENCH_CHILD_OPTIONS: JSON.stringify(options) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) =>
        reject(new Error(`${label} exited (${code}) before it was ready`));
      child.once('exit', onExit);
      child.once('message', (message: ChildMessage) => {
        child.off('exit', onExit);
        if ('ready' in message) resolve(new BenchChild<Ready>(label, child, message.ready as Ready));
        else {
          child.kill();
          reject(new Error(`${label} failed to start: ${'failed' in message ? message.failed : '?'}`));
        }
      });
    });
  }

  call<T>(command: string, args?: unknown): Promise<T> {
    if (this.#exited) return Promise.reject(new Error(`${this.label} has exited`));
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.child.send({ id, command, args }, (error) => {
        if (!error) return;
        this.#pending.delete(id);
        reject(new Error(`${this.label}: ${error.message}`));
      });
    });
  }

  /** Asks the child to stop, and kills it if it has not exited within 15 s. */
  async stop(): Promise<void> {
    if (this.#exited) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.call('stop').catch(() => undefined);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  }
}

/** In the child: its options, as the parent passed them. */
export function childOptions(): unknown {
  return JSON.parse(process.env.BENCH_CHILD_OPTIONS ?? '{}');
}

/** In the child: announce readiness (or failure), then answer the parent's commands; `stop` must exit. */
export function serveCommands(start: () => Promise<{ ready: unknown; handlers: Handlers }>): void {
  start().then(
    ({ ready, handlers }) => {
      process.on('message', (message: { id: number; command: string; args: unknown }) => {
        const handler = handlers[message.command];
        Promise.resolve()
          .then(() => {
            if (!handler) throw new Error(`unknown command ${message.command}`);
            return handler(message.args);
          })
          .then(
            (value) => process.send?.({ id: message.id, ok: true, value }),
            (error: unknown) => process.send?.({ id: message.id, ok: false, error: String(error) }),
          );
      });
      process.send?.({ ready });
    },
    (error: unknown) => {
      process.send?.({ failed: String(error) }, () => process.exit(1));
    },
  );
  // The parent going away ends the child.
  process.on('disconnect', () => process.exit(0));
}
