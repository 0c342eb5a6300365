// Reads documents in a pool of worker threads (extract-worker.ts), never on the serving thread. Each job has its own
// budget: wall time from when its worker begins (past it the worker is replaced), the worker's heap, and the limits
// the worker checks as it reads. One user runs at most all workers but one, so others never wait behind them.
import { Worker } from 'node:worker_threads';

import type { DocumentFormat } from './contracts.js';
import {
  seconds,
  UnreadableDocumentError,
  type ExtractedDocument,
  type ReadFailureCode,
  type ReadingBudget,
  type ReadingLimits,
} from './document-text.js';

export interface ReadJob {
  format: DocumentFormat;
  content: Uint8Array;
  /** Who uploaded the document: the pool shares its workers fairly between them. */
  owner: string;
}

/** Reads documents off the serving thread; throws UnreadableDocumentError for a document that cannot be read. */
export interface DocumentReader {
  read(job: ReadJob): Promise<ExtractedDocument>;
  /** Stops every worker; documents still queued or being read fail with a retryable error. */
  close(): Promise<void>;
}

export interface ReadRequest {
  id: number;
  format: DocumentFormat;
  content: Uint8Array;
  limits: ReadingLimits;
}

export type ReadReply =
  | { type: 'ready' }
  /** The worker starts reading the document now: its time budget counts from here. */
  | { type: 'begin'; id: number }
  | { type: 'read'; id: number; document: ExtractedDocument }
  /** Why the document cannot be read; without a `failure`, the worker's own trouble (the job may be retried). */
  | { type: 'failed'; id: number; failure?: ReadFailureCode; message: string };

/** How long a worker may take to begin a job it was sent (to load pdf.js, on a cold and busy machine). */
const STARTING_MS = 120_000;

interface Job extends ReadJob {
  id: number;
  resolve(document: ExtractedDocument): void;
  reject(error: Error): void;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  job?: Job | undefined;
  timer?: NodeJS.Timeout | undefined;
}

export function createDocumentReader(budget: ReadingBudget): DocumentReader {
  const queue: Job[] = [];
  const slots = new Set<Slot>();
  /** Jobs running per owner. */
  const running = new Map<string, number>();
  const perOwner = Math.max(1, budget.workers - 1);
  let nextId = 1;
  let closed = false;

  /** Starts every queued job that may start, oldest first, and the workers the rest of them need. */
  const dispatch = (): void => {
    if (closed) return;
    const counted = new Map(running);
    let waiting = 0;
    for (let index = 0; index < queue.length;) {
      const job = queue[index]!;
      const active = counted.get(job.owner) ?? 0;
      if (active >= perOwner) {
        index += 1;
        continue;
      }
      counted.set(job.owner, active + 1);
      const slot = [...slots].find((candidate) => candidate.ready && candidate.job === undefined);
      if (slot === undefined) {
        waiting += 1;
        index += 1;
        continue;
      }
      queue.splice(index, 1);
      start(slot, job);
    }
    const starting = [...slots].filter((slot) => !slot.ready).length;
    for (let count = starting; count < waiting && slots.size < budget.workers; count += 1) spawn();
  };

  const start = (slot: Slot, job: Job): void => {
    slot.job = job;
    running.set(job.owner, (running.get(job.owner) ?? 0) + 1);
    // Until the worker begins (its readers loaded), a generous bound of our own: a worker that never does is lost.
    slot.timer = setTimeout(
      () => {
        finish(slot)?.reject(new Error('The document reader did not begin reading the document.'));
        retire(slot);
      },
      Math.max(budget.timeoutMs, STARTING_MS),
    );
    slot.worker.ref();
    // A copy, transferred: the caller keeps its bytes, and nothing is copied twice.
    const content = new Uint8Array(job.content);
    const request: ReadRequest = { id: job.id, format: job.format, content, limits: budget.limits };
    slot.worker.postMessage(request, [content.buffer]);
  };

  /** The slot's job, taken off it (undefined when it has none). */
  const finish = (slot: Slot): Job | undefined => {
    const job = slot.job;
    if (job === undefined) return undefined;
    clearTimeout(slot.timer);
    slot.job = undefined;
    slot.timer = undefined;
    const left = (running.get(job.owner) ?? 1) - 1;
    if (left === 0) running.delete(job.owner);
    else running.set(job.owner, left);
    // An idle worker does not keep the process alive.
    slot.worker.unref();
    return job;
  };

  /** Stops a worker for good: the next job that needs one gets a new worker. */
  const retire = (slot: Slot): void => {
    if (!slots.delete(slot)) return;
    void slot.worker.terminate();
    dispatch();
  };

  /** A new worker, for a job waiting: it keeps the process alive until it has started. */
  const spawn = (): void => {
    const worker = startWorker(budget.memoryMb);
    const slot: Slot = { worker, ready: false };
    slots.add(slot);
    worker.on('message', (reply: ReadReply) => {
      if (reply.type === 'ready') {
        slot.ready = true;
        dispatch();
        if (slot.job === undefined) slot.worker.unref();
        return;
      }
      if (slot.job?.id !== reply.id) return;
      if (reply.type === 'begin') {
        clearTimeout(slot.timer);
        slot.timer = setTimeout(() => {
          finish(slot)?.reject(
            new UnreadableDocumentError(
              'too_slow',
              `The document could not be read: it took longer than ${seconds(budget.timeoutMs)} to read.`,
            ),
          );
          retire(slot);
        }, budget.timeoutMs);
        return;
      }
      const job = finish(slot)!;
      if (reply.type === 'read') job.resolve(reply.document);
      else if (reply.failure === undefined) job.reject(new Error(reply.message));
      else job.reject(new UnreadableDocumentError(reply.failure, reply.message));
      dispatch();
    });
    worker.on('error', (error: Error & { code?: string }) => {
      const job = finish(slot);
      if (job !== undefined) {
        job.reject(
          error.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? new UnreadableDocumentError(
                'too_large',
                `The document could not be read: it needs more than ${budget.memoryMb} MB of memory to read.`,
              )
            : new Error(`The document reader stopped: ${error.message}`),
        );
      } else if (!slot.ready) {
        // A worker that cannot even start would fail the same way again: the waiting documents are retried later.
        for (const waiting of queue.splice(0))
          waiting.reject(new Error(`The document reader could not start: ${error.message}`));
      }
      retire(slot);
    });
    worker.on('exit', (code) => {
      finish(slot)?.reject(new Error(`The document reader stopped: its thread exited with code ${code}.`));
      retire(slot);
    });
  };

  return {
    read(job) {
      if (closed) return Promise.reject(new Error('The document reader is closed.'));
      return new Promise<ExtractedDocument>((resolve, reject) => {
        queue.push({ ...job, id: nextId++, resolve, reject });
        dispatch();
      });
    },
    async close() {
      closed = true;
      for (const job of queue.splice(0)) job.reject(new Error('The document reader is closed.'));
      const stopping = [...slots].map(async (slot) => {
        slots.delete(slot);
        finish(slot)?.reject(new Error('The document reader is closed.'));
        await slot.worker.terminate();
      });
      await Promise.all(stopping);
    },
  };
}

function startWorker(memoryMb: number): Worker {
  const resourceLimits = { maxOldGenerationSizeMb: memoryMb };
  // Compiled, the worker is the .js beside this file. From the sources (tests, tsx) it is the .ts, which the new
  // thread can only load once tsx's loader is registered in it (a loader is per thread).
  return import.meta.url.endsWith('.ts')
    ? new Worker(
        `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(
          new URL('./extract-worker.ts', import.meta.url).href,
        )}); });`,
        { eval: true, resourceLimits },
      )
    : new Worker(new URL('./extract-worker.js', import.meta.url), { resourceLimits });
}
