// Delivers one queue's or subscription's messages to a handler as the Functions host's Service Bus listener
// does (peek-lock): complete on success, abandon on a throw, dead-letter once the deliveries run out. With
// sessions, a receiver holds a session and hands out its messages one at a time until the session is empty.
import { randomUUID } from 'node:crypto';
import { ensureError } from '../../shared/errors.js';
import type { AzureLatencyModel } from '../latency/azure-latency.js';
import type { ReceivedMessage } from './trigger-invocation.js';
import { toReceivedMessage, type DeliveryQueue, type StoredMessage } from './delivery-queue.js';
import type { DeliveryGate, DeliveryKind } from './delivery-gate.js';

export interface EntityReceiverSettings {
  maxDeliveryCount: number;
  redeliveryDelayMs: number;
  maxConcurrentSessions: number;
  maxConcurrentCalls: number;
  /** Called after each delivery settles, so the broker can tell when everything is idle. */
  onSettled: () => void;
  /**
   * With a data file: saves the new delivery count before the handler runs, so a delivery cut short by a
   * crash still counts, as a lost lock does in Service Bus (a message that kills the process ends up
   * dead-lettered instead of looping). Never rejects.
   */
  recordDelivery?: () => Promise<void>;
  /** Counts the operations Azure would bill for, when given. */
  operations?: ServiceBusOperations;
  /** Hands each message out one service-bus.delivery draw after it is taken (undefined: at once). */
  latency?: AzureLatencyModel;
  /** The broker's gate and this entity's kind: a background delivery starts only when the gate lets it. */
  gate?: { gate: DeliveryGate; kind: DeliveryKind };
}

/**
 * The operations Azure Service Bus bills on Standard, as the Functions host would make them (prefetch off): every
 * message sent, session accepted, receive call (each delivery, and the empty one that ends a session), settlement.
 */
export interface ServiceBusOperations {
  sends: number;
  sessionAccepts: number;
  receives: number;
  completes: number;
  abandons: number;
  deadLetters: number;
}

export function noServiceBusOperations(): ServiceBusOperations {
  return { sends: 0, sessionAccepts: 0, receives: 0, completes: 0, abandons: 0, deadLetters: 0 };
}

export type MessageHandler = (message: ReceivedMessage) => Promise<void>;

export const MAX_DELIVERY_COUNT_EXCEEDED = 'MaxDeliveryCountExceeded';

type Outcome = 'completed' | 'dead-lettered' | 'failed';

export class EntityReceiver {
  private stopped = false;
  /** Sessions held (with sessions) or deliveries under way (without). */
  private slotsInUse = 0;
  private readonly running = new Set<Promise<void>>();
  /** Failed messages (no sessions) waiting out the redelivery delay, still locked. */
  private readonly redeliveries = new Map<NodeJS.Timeout, StoredMessage>();
  /** Session receivers waiting out a redelivery delay; stop() wakes them. */
  private readonly sleepers = new Set<() => void>();
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly queue: DeliveryQueue,
    private readonly handler: MessageHandler,
    private readonly settings: EntityReceiverSettings,
  ) {}

  /** Hands out whatever can be handed out now; call it whenever messages arrive. */
  pump(): void {
    if (this.stopped) return;
    if (this.queue.requiresSession) {
      while (this.slotsInUse < this.settings.maxConcurrentSessions && this.gateOpen()) {
        const sessionId = this.queue.lockNextSession();
        if (sessionId === undefined) return;
        this.occupySlot();
        this.track(this.receiveSession(sessionId));
      }
    } else {
      while (this.slotsInUse < this.settings.maxConcurrentCalls && this.gateOpen()) {
        const message = this.queue.takeNext();
        if (!message) return;
        this.occupySlot();
        this.track(this.receiveOne(message));
      }
    }
  }

  private gateOpen(): boolean {
    const gated = this.settings.gate;
    return gated === undefined || gated.gate.mayStart(gated.kind);
  }

  private occupySlot(): void {
    this.slotsInUse += 1;
    const gated = this.settings.gate;
    gated?.gate.started(gated.kind);
  }

  private freeSlot(): void {
    this.slotsInUse -= 1;
    const gated = this.settings.gate;
    gated?.gate.ended(gated.kind);
  }

  /** True while a handler runs or a failed message waits to be handed out again. */
  get busy(): boolean {
    return this.running.size > 0 || this.redeliveries.size > 0;
  }

  /** Stops handing out messages and resolves once the running handlers have settled. */
  stop(): Promise<void> {
    this.stopping ??= this.drain();
    return this.stopping;
  }

  private async drain(): Promise<void> {
    this.stopped = true;
    for (const wake of this.sleepers) wake();
    for (const [timer, message] of this.redeliveries) {
      clearTimeout(timer);
      this.queue.abandon(message);
    }
    this.redeliveries.clear();
    while (this.running.size > 0) await Promise.all(this.running);
  }

  private async receiveSession(sessionId: string): Promise<void> {
    try {
      // A broker delivers after the send has returned, never inside it.
      await Promise.resolve();
      const operations = this.settings.operations;
      if (operations) operations.sessionAccepts += 1;
      while (!this.stopped) {
        const message = this.queue.takeFromSession(sessionId);
        if (!message) {
          if (operations) operations.receives += 1;
          break;
        }
        if ((await this.deliver(message)) === 'failed') {
          // Back to the head of its session, which this receiver keeps: order holds across retries.
          this.queue.abandon(message);
          await this.sleep(this.settings.redeliveryDelayMs);
        }
      }
    } finally {
      this.queue.unlockSession(sessionId);
      this.freeSlot();
      this.pump();
    }
  }

  private async receiveOne(message: StoredMessage): Promise<void> {
    try {
      await Promise.resolve();
      if ((await this.deliver(message)) === 'failed') this.redeliverLater(message);
    } finally {
      this.freeSlot();
      this.pump();
    }
  }

  private async deliver(message: StoredMessage): Promise<Outcome> {
    const outcome = await this.settle(message);
    const operations = this.settings.operations;
    if (operations) {
      operations.receives += 1;
      if (outcome === 'completed') operations.completes += 1;
      else if (outcome === 'failed') operations.abandons += 1;
      else operations.deadLetters += 1;
    }
    return outcome;
  }

  private async settle(message: StoredMessage): Promise<Outcome> {
    if (this.settings.latency !== undefined) {
      // The message is locked meanwhile, and a session's next one is taken only after it settles: order holds.
      await this.settings.latency.delay('service-bus.delivery');
      // Stopped before the handler saw it: handed back untouched, as a receiver closed mid-receive leaves it.
      if (this.stopped) return 'failed';
    }
    message.deliveryCount += 1;
    if (this.settings.recordDelivery) await this.settings.recordDelivery();
    try {
      await this.handler(toReceivedMessage(message, randomUUID()));
      this.queue.complete(message);
      return 'completed';
    } catch (error) {
      if (message.deliveryCount < this.settings.maxDeliveryCount) return 'failed';
      this.queue.deadLetter(message, MAX_DELIVERY_COUNT_EXCEEDED, ensureError(error).message);
      return 'dead-lettered';
    }
  }

  private redeliverLater(message: StoredMessage): void {
    if (this.stopped) {
      this.queue.abandon(message);
      return;
    }
    const timer = setTimeout(() => {
      this.redeliveries.delete(timer);
      this.queue.abandon(message);
      this.pump();
      this.settings.onSettled();
    }, this.settings.redeliveryDelayMs);
    this.redeliveries.set(timer, message);
  }

  private sleep(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.sleepers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.sleepers.add(wake);
    });
  }

  private track(delivery: Promise<void>): void {
    this.running.add(delivery);
    void delivery.finally(() => {
      this.running.delete(delivery);
      this.settings.onSettled();
    });
  }
}
