// The local Service Bus's data file: read once at start-up, each declared queue or topic takes its saved
// state from it, and the live state is written back: sends and delivery starts wait for a shared write
// (group commit), settlements are batched by the flush scheduler. Entities the app no longer declares stay.
import { resolve } from 'node:path';
import { ConflictError } from '../../shared/errors.js';
import type { QueueDefinition, TopicDefinition } from '../../shared/messaging/service-bus-entities.js';
import { CorruptDataFileError, readDataFile, writeDataFile } from '../persistence/data-file.js';
import { FlushScheduler } from '../persistence/flush-scheduler.js';
import {
  SNAPSHOT_FORMAT,
  SNAPSHOT_VERSION,
  busSnapshotSchema,
  inconsistencies,
  type BusSnapshot,
  type EntitySnapshot,
  type QueueSnapshot,
  type TopicSnapshot,
} from './bus-snapshot.js';
import { GroupCommit } from './group-commit.js';

const DATA_FILE_KIND = 'local Service Bus data';

export interface BusDataFileOptions {
  /** The declared entities' state, as of now. */
  liveEntities: () => EntitySnapshot[];
  /** Settlements are saved at most this long after they happen. */
  flushDelayMs: number;
  /** Reports a failed background save; the next save writes everything again. */
  onSaveError?: (error: unknown) => void;
  /** The duplicate-detection window and clock, to leave expired ids of undeclared entities out. */
  windowMs: number;
  now: () => number;
}

export class BusDataFile {
  private readonly commits = new GroupCommit(() => writeDataFile(this.file, this.snapshot()));
  private readonly scheduler: FlushScheduler;
  private readonly onSaveError: (error: unknown) => void;
  /**
   * Entities the file holds that the app has not declared (yet): not delivered, saved again as they were,
   * and taken up if the app declares them again, so switching branches does not lose messages.
   */
  private readonly kept: Map<string, EntitySnapshot>;

  private constructor(
    readonly file: string,
    saved: BusSnapshot | undefined,
    private readonly options: BusDataFileOptions,
  ) {
    this.kept = new Map(saved?.entities.map((entity) => [entity.name.toLowerCase(), entity]));
    this.onSaveError =
      options.onSaveError ??
      ((error: unknown) =>
        console.error(`local Service Bus: saving ${file} failed; the next change saves again`, error));
    this.scheduler = new FlushScheduler(() => this.commits.commit(), options.flushDelayMs, this.onSaveError);
  }

  /** Reads the file (none yet is fine); one that cannot be loaded stops this with CorruptDataFileError. */
  static async open(file: string, options: BusDataFileOptions): Promise<BusDataFile> {
    const path = resolve(file);
    const saved = await readDataFile(path, busSnapshotSchema, DATA_FILE_KIND);
    const problems = saved ? inconsistencies(saved) : [];
    if (problems.length > 0) {
      throw new CorruptDataFileError(
        path,
        DATA_FILE_KIND,
        `its contents are inconsistent: ${problems.join('; ')}`,
      );
    }
    return new BusDataFile(path, saved, options);
  }

  /** The saved state of a queue being declared; call adopt() once it exists. */
  savedQueue(definition: QueueDefinition): QueueSnapshot | undefined {
    const saved = this.saved(definition.name, 'queue');
    if (saved && saved.requiresSession !== definition.requiresSession) {
      throw this.sessionsConflict(`queue '${definition.name}'`, saved.requiresSession);
    }
    return saved;
  }

  /** The saved state of a topic being declared (with its subscriptions); call adopt() once it exists. */
  savedTopic(definition: TopicDefinition): TopicSnapshot | undefined {
    const saved = this.saved(definition.name, 'topic');
    for (const subscription of definition.subscriptions) {
      const match = saved?.subscriptions.find(
        (s) => s.name.toLowerCase() === subscription.name.toLowerCase(),
      );
      if (match && match.requiresSession !== subscription.requiresSession) {
        throw this.sessionsConflict(
          `subscription '${definition.name}/Subscriptions/${subscription.name}'`,
          match.requiresSession,
        );
      }
    }
    return saved;
  }

  /** The entity is declared now: its state is saved from the live one from here on. */
  adopt(name: string): void {
    this.kept.delete(name.toLowerCase());
  }

  /** Resolves once the state as of this call is on disk. */
  commit(): Promise<void> {
    return this.commits.commit();
  }

  /** As commit(), but a failure is reported instead of thrown. */
  commitInBackground(): Promise<void> {
    return this.commits.commit().catch(this.onSaveError);
  }

  /** Something changed that may be saved a little later. */
  markDirty(): void {
    this.scheduler.markDirty();
  }

  flush(): Promise<void> {
    return this.scheduler.flush();
  }

  /** Drops a pending save (an open() that failed half-way must not write). */
  cancel(): void {
    this.scheduler.cancel();
  }

  /** Saves everything now, with no save left pending. */
  close(): Promise<void> {
    this.scheduler.cancel();
    return this.commits.commit();
  }

  /** Everything a restart needs, taken when a write starts. */
  private snapshot(): BusSnapshot {
    const now = this.options.now();
    const kept = [...this.kept.values()].map((entity) => ({
      ...entity,
      duplicateDetection: entity.duplicateDetection.filter(
        ([, acceptedAt]) => now - Date.parse(acceptedAt) < this.options.windowMs,
      ),
    }));
    return {
      format: SNAPSHOT_FORMAT,
      version: SNAPSHOT_VERSION,
      savedAt: new Date().toISOString(),
      entities: [...this.options.liveEntities(), ...kept],
    };
  }

  private saved<K extends EntitySnapshot['kind']>(
    name: string,
    kind: K,
  ): Extract<EntitySnapshot, { kind: K }> | undefined {
    const saved = this.kept.get(name.toLowerCase());
    if (!saved) return undefined;
    if (saved.kind !== kind) {
      throw new ConflictError(
        `The data file ${this.file} holds a ${saved.kind} named '${saved.name}', and the app declares a ` +
          `${kind} of that name. Service Bus cannot turn one into the other: start once with the old ` +
          'definition to drain it, or move the file away to start empty.',
      );
    }
    return saved as Extract<EntitySnapshot, { kind: K }>;
  }

  private sessionsConflict(what: string, savedRequiresSession: boolean): ConflictError {
    return new ConflictError(
      `The data file ${this.file} holds ${what} ${savedRequiresSession ? 'with' : 'without'} sessions, and ` +
        `the app declares it ${savedRequiresSession ? 'without' : 'with'}. As in Service Bus, requiresSession ` +
        'cannot change on an existing entity: start once with the old definition to drain it, or move the ' +
        'file away to start empty.',
    );
  }
}
