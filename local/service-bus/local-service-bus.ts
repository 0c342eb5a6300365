// The local runtime's in-process Service Bus: queues, topics with subscriptions, sessions (in order per
// session id), duplicate detection by message id, abandon/redelivery with a delivery count and
// dead-lettering, with the names, limits and reasons of Service Bus; durable in a data file when given one.
import { ConflictError, DependencyError, ensureError } from '../../shared/errors.js';
import type { AzureLatencyModel } from '../latency/azure-latency.js';
import type { MessagePublisher, OutgoingMessage } from '../../shared/messaging/message-publisher.js';
import {
  DUPLICATE_DETECTION_WINDOW_MS,
  MAX_DELIVERY_COUNT,
  type QueueDefinition,
  type TopicDefinition,
} from '../../shared/messaging/service-bus-entities.js';
import { BusDataFile } from './bus-data-file.js';
import { storeOf, type Queue, type Topic } from './bus-entities.js';
import {
  wholeNumber,
  type LocalServiceBusOpenOptions,
  type LocalServiceBusOptions,
  type MessageSource,
  type ReceiveOptions,
} from './bus-options.js';
import {
  fromHistorySnapshot,
  restoreStore,
  toHistorySnapshot,
  toStoreSnapshot,
  type EntitySnapshot,
} from './bus-snapshot.js';
import { DeliveryQueue, type DeadLetteredMessage, type StoredMessage } from './delivery-queue.js';
import { DeliveryGate } from './delivery-gate.js';
import { DuplicateDetector } from './duplicate-detector.js';
import {
  EntityReceiver,
  noServiceBusOperations,
  type MessageHandler,
  type ServiceBusOperations,
} from './entity-receiver.js';
import { prepare, SendOrder, type PreparedMessage } from './outgoing-message.js';

export { CorruptDataFileError } from '../persistence/data-file.js';

export type { ReceivedMessage } from './trigger-invocation.js';
export type { ServiceBusOperations } from './entity-receiver.js';
export type {
  LocalServiceBusOpenOptions,
  LocalServiceBusOptions,
  MessageSource,
  ReceiveOptions,
} from './bus-options.js';

export class LocalServiceBus implements MessagePublisher {
  private readonly maxDeliveryCount: number;
  private readonly windowMs: number;
  private readonly redeliveryDelayMs: number;
  private readonly now: () => number;
  private readonly latency: AzureLatencyModel | undefined;
  private readonly sendOrder = new SendOrder();
  /** Queues and topics share one namespace; Service Bus names are case-insensitive. */
  private readonly entities = new Map<string, Queue | Topic>();
  private readonly receivers = new Map<DeliveryQueue, EntityReceiver>();
  private idleWaiters: (() => void)[] = [];
  private closed = false;
  private dataFile: BusDataFile | undefined;
  private readonly operations = noServiceBusOperations();
  private readonly gate: DeliveryGate;

  constructor(options: LocalServiceBusOptions = {}) {
    this.maxDeliveryCount = wholeNumber(
      'maxDeliveryCount',
      options.maxDeliveryCount ?? MAX_DELIVERY_COUNT,
      1,
    );
    this.windowMs = wholeNumber(
      'duplicateDetectionWindowMs',
      options.duplicateDetectionWindowMs ?? DUPLICATE_DETECTION_WINDOW_MS,
      0,
    );
    this.redeliveryDelayMs = wholeNumber('redeliveryDelayMs', options.redeliveryDelayMs ?? 50, 0);
    this.now = options.now ?? Date.now;
    this.latency = options.latency;
    this.gate = new DeliveryGate(
      options.maxBackgroundWhileBusy === undefined
        ? undefined
        : wholeNumber('maxBackgroundWhileBusy', options.maxBackgroundWhileBusy, 1),
    );
  }

  /**
   * A broker with the given entities. With a data file, the state it holds is restored into them: messages
   * (those that were being handled are available again), dead letters, sequence numbers and the
   * duplicate-detection history. A file that cannot be loaded stops this with CorruptDataFileError.
   */
  static async open(options: LocalServiceBusOpenOptions = {}): Promise<LocalServiceBus> {
    const bus = new LocalServiceBus(options);
    if (options.dataFile !== undefined) {
      bus.dataFile = await BusDataFile.open(options.dataFile, {
        liveEntities: () => bus.entitySnapshots(),
        flushDelayMs: options.flushDelayMs ?? 200,
        ...(options.onSaveError === undefined ? {} : { onSaveError: options.onSaveError }),
        windowMs: bus.windowMs,
        now: bus.now,
      });
    }
    try {
      options.queues?.forEach((queue) => bus.createQueue(queue));
      options.topics?.forEach((topic) => bus.createTopic(topic));
    } catch (error) {
      bus.dataFile?.cancel();
      throw error;
    }
    return bus;
  }

  createQueue(definition: QueueDefinition): void {
    this.assertNewName(definition.name);
    const saved = this.dataFile?.savedQueue(definition);
    const queue: Queue = {
      kind: 'queue',
      name: definition.name,
      store: this.newStore(definition.name, definition.requiresSession),
      duplicates: new DuplicateDetector(this.windowMs, this.now),
      lastSequenceNumber: 0,
    };
    if (saved) {
      queue.lastSequenceNumber = saved.lastSequenceNumber;
      queue.duplicates.restore(fromHistorySnapshot(saved.duplicateDetection));
      this.restored(restoreStore(queue.store, saved, this.maxDeliveryCount));
    }
    this.entities.set(definition.name.toLowerCase(), queue);
    this.dataFile?.adopt(definition.name);
  }

  createTopic(definition: TopicDefinition): void {
    this.assertNewName(definition.name);
    const saved = this.dataFile?.savedTopic(definition);
    const savedSubscriptions = new Map(saved?.subscriptions.map((s) => [s.name.toLowerCase(), s]));
    const subscriptions = new Map<string, DeliveryQueue>();
    for (const subscription of definition.subscriptions) {
      const key = subscription.name.toLowerCase();
      if (subscriptions.has(key)) {
        throw new ConflictError(
          `Topic '${definition.name}' lists subscription '${subscription.name}' twice.`,
        );
      }
      const path = `${definition.name}/Subscriptions/${subscription.name}`;
      subscriptions.set(key, this.newStore(path, subscription.requiresSession));
    }
    const topic: Topic = {
      kind: 'topic',
      name: definition.name,
      subscriptions,
      duplicates: new DuplicateDetector(this.windowMs, this.now),
      lastSequenceNumber: 0,
      keptSubscriptions: [],
    };
    if (saved) {
      topic.lastSequenceNumber = saved.lastSequenceNumber;
      topic.duplicates.restore(fromHistorySnapshot(saved.duplicateDetection));
      for (const [key, savedSubscription] of savedSubscriptions) {
        const store = subscriptions.get(key);
        if (store) this.restored(restoreStore(store, savedSubscription, this.maxDeliveryCount));
        else topic.keptSubscriptions.push(savedSubscription);
      }
    }
    this.entities.set(definition.name.toLowerCase(), topic);
    this.dataFile?.adopt(definition.name);
  }

  /**
   * Accepts all the messages or none (like a Service Bus batch); duplicates within the window are dropped.
   * With a data file, resolves once the accepted messages are on disk (concurrent sends share one write),
   * also when they were all dropped as duplicates, since the first send of an id may still be on its way.
   */
  publish(entityName: string, messages: OutgoingMessage | readonly OutgoingMessage[]): Promise<void> {
    const batch = Array.isArray(messages) ? messages : [messages as OutgoingMessage];
    if (this.latency !== undefined) return this.publishLate(this.latency, entityName, batch);
    try {
      this.accept(entityName, batch);
    } catch (error) {
      return Promise.reject(ensureError(error));
    }
    return this.committed(entityName);
  }

  /**
   * A send that Service Bus accepts one service-bus.send draw later (a refused one is refused at once, as the SDK
   * checks it before sending); its messages reach receivers only then.
   */
  private async publishLate(
    latency: AzureLatencyModel,
    entityName: string,
    messages: readonly OutgoingMessage[],
  ): Promise<void> {
    this.prepareAll(entityName, messages);
    await this.sendOrder.accept(entityName.toLowerCase(), latency.draw('service-bus.send'), () =>
      this.accept(entityName, messages),
    );
    await this.committed(entityName);
  }

  /** Resolves once the data file holds what was accepted (at once without one). */
  private committed(entityName: string): Promise<void> {
    const dataFile = this.dataFile;
    if (!dataFile) return Promise.resolve();
    return dataFile.commit().catch((error: unknown) => {
      // Like a send that timed out in Azure: the messages may still be delivered, and a retry with the
      // same message ids is dropped as a duplicate yet resolves only once they are on disk.
      throw new DependencyError(
        'Service Bus',
        `The messages sent to '${entityName}' could not be saved to ${dataFile.file}: ` +
          `${ensureError(error).message}. Retry with the same message ids.`,
        { cause: error },
      );
    });
  }

  /** Starts delivering an entity's messages to handler. The returned function stops it (awaiting running handlers). */
  receive(source: MessageSource, handler: MessageHandler, options: ReceiveOptions = {}): () => Promise<void> {
    if (this.closed) throw new DependencyError('Service Bus', 'The local Service Bus is closed.');
    const store = storeOf(this.entities, source);
    if (options.isSessionsEnabled === true && !store.requiresSession) {
      throw new DependencyError(
        'Service Bus',
        `A sessionful message receiver cannot be created on '${store.path}': the entity does not require sessions.`,
      );
    }
    if (options.isSessionsEnabled === false && store.requiresSession) {
      throw new DependencyError(
        'Service Bus',
        `'${store.path}' requires sessions: a non-sessionful receiver cannot be created on it.`,
      );
    }
    if (this.receivers.has(store)) {
      throw new ConflictError(
        `'${store.path}' already has a receiver: two functions would compete for its messages.`,
      );
    }
    const dataFile = this.dataFile;
    // Topic subscriptions are background work: they yield to queue deliveries (DeliveryGate).
    const kind = 'queueName' in source ? 'foreground' : 'background';
    const receiver = new EntityReceiver(store, handler, {
      maxDeliveryCount: this.maxDeliveryCount,
      redeliveryDelayMs: this.redeliveryDelayMs,
      maxConcurrentSessions: wholeNumber('maxConcurrentSessions', options.maxConcurrentSessions ?? 8, 1),
      maxConcurrentCalls: wholeNumber('maxConcurrentCalls', options.maxConcurrentCalls ?? 16, 1),
      onSettled: () => this.checkIdle(),
      operations: this.operations,
      ...(dataFile === undefined ? {} : { recordDelivery: () => dataFile.commitInBackground() }),
      ...(this.latency === undefined ? {} : { latency: this.latency }),
      gate: { gate: this.gate, kind },
    });
    this.receivers.set(store, receiver);
    const stopWaking = kind === 'background' ? this.gate.onOpening(() => receiver.pump()) : undefined;
    receiver.pump();
    return () =>
      receiver.stop().then(() => {
        stopWaking?.();
        if (this.receivers.get(store) === receiver) this.receivers.delete(store);
        this.checkIdle();
      });
  }

  /** The operations Azure would bill since start or the last resetStats(), for benchmarks. */
  stats(): ServiceBusOperations {
    return { ...this.operations };
  }

  resetStats(): void {
    // In place: the receivers count into the same object.
    Object.assign(this.operations, noServiceBusOperations());
  }

  deadLetters(source: MessageSource): readonly DeadLetteredMessage[] {
    return storeOf(this.entities, source).deadLetters;
  }

  /** Messages waiting or being handled (not dead-lettered), like the entity's active message count. */
  activeMessageCount(source: MessageSource): number {
    return storeOf(this.entities, source).activeMessageCount;
  }

  /**
   * Resolves when no message is waiting for or being handled by a receiver, and none waits to be redelivered.
   * Messages of an entity nobody receives from cannot move, so they do not count.
   */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Saves the data file now (resolves at once without one). */
  async flush(): Promise<void> {
    await this.dataFile?.flush();
  }

  /** Stops every receiver (awaiting running handlers), refuses further sends, and saves the data file. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.receivers.values()].map((receiver) => receiver.stop()));
    this.receivers.clear();
    this.checkIdle();
    await this.dataFile?.close();
  }

  /** The declared entities' state as the data file keeps it. */
  private entitySnapshots(): EntitySnapshot[] {
    return [...this.entities.values()].map((entity): EntitySnapshot => {
      const common = {
        name: entity.name,
        lastSequenceNumber: entity.lastSequenceNumber,
        duplicateDetection: toHistorySnapshot(entity.duplicates.history()),
      };
      if (entity.kind === 'queue') return { kind: 'queue', ...common, ...toStoreSnapshot(entity.store) };
      const subscriptions = [...entity.subscriptions.values()].map((store) => ({
        // The path keeps the name as declared; the map's keys are lower-cased.
        name: store.path.slice(store.path.lastIndexOf('/') + 1),
        ...toStoreSnapshot(store),
      }));
      return { kind: 'topic', ...common, subscriptions: [...subscriptions, ...entity.keptSubscriptions] };
    });
  }

  private newStore(path: string, requiresSession: boolean): DeliveryQueue {
    return new DeliveryQueue(path, requiresSession, () => this.dataFile?.markDirty());
  }

  /** Messages dead-lettered while restoring change the state the file holds. */
  private restored(deadLettered: number): void {
    if (deadLettered > 0) this.dataFile?.markDirty();
  }

  /** The entity and the messages as they travel, or the error Service Bus would answer the whole batch with. */
  private prepareAll(
    entityName: string,
    messages: readonly OutgoingMessage[],
  ): { entity: Queue | Topic; prepared: PreparedMessage[] } {
    if (this.closed) throw new DependencyError('Service Bus', 'The local Service Bus is closed.');
    const entity = this.entities.get(entityName.toLowerCase());
    if (!entity) {
      const known = [...this.entities.values()].map((e) => e.name).join(', ') || 'none';
      throw new DependencyError(
        'Service Bus',
        `The messaging entity '${entityName}' could not be found (local queues and topics: ${known}).`,
      );
    }
    return { entity, prepared: messages.map((message) => prepare(message, entity)) };
  }

  private accept(entityName: string, messages: readonly OutgoingMessage[]): void {
    // Validate everything first: a refused batch leaves nothing behind.
    const { entity, prepared } = this.prepareAll(entityName, messages);
    // Each message is an operation, duplicates too: Service Bus received them.
    this.operations.sends += prepared.length;

    const touched = new Set<DeliveryQueue>();
    for (const message of prepared) {
      if (entity.duplicates.isDuplicate(message.messageId)) continue;
      entity.lastSequenceNumber += 1;
      const stored: StoredMessage = {
        ...message,
        sequenceNumber: entity.lastSequenceNumber,
        enqueuedTimeUtc: new Date(this.now()),
        deliveryCount: 0,
      };
      const stores = entity.kind === 'queue' ? [entity.store] : [...entity.subscriptions.values()];
      for (const store of stores) {
        // Each subscription gets its own copy: deliveries and settlement are per subscription.
        store.enqueue({ ...stored });
        touched.add(store);
      }
    }
    for (const store of touched) this.receivers.get(store)?.pump();
    this.checkIdle();
  }

  private assertNewName(name: string): void {
    if (this.entities.has(name.toLowerCase())) {
      throw new ConflictError(`A queue or topic named '${name}' already exists.`);
    }
  }

  private isIdle(): boolean {
    for (const [store, receiver] of this.receivers) {
      if (receiver.busy || store.hasWaiting) return false;
    }
    return true;
  }

  private checkIdle(): void {
    if (this.idleWaiters.length === 0 || !this.isIdle()) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
