import type { EventEnvelope } from '@rigmarket/contracts';

export interface OutgoingMessage {
  topic: string;
  /** The stream id: one stream keeps its order. */
  key: string;
  envelope: EventEnvelope;
}

export interface DeliveryInfo {
  topic: string;
  partition: number;
  offset: string;
}

export interface Subscription {
  /** Consumer group: subscribers sharing it share the work (Kafka) or run once (in-process). */
  groupId: string;
  topics: readonly string[];
  /** Resolves when the event is durably handled; a rejection means "deliver again". */
  handle(envelope: EventEnvelope, delivery: DeliveryInfo): Promise<void>;
  /**
   * Optional: several deliveries at once, in delivery order (a projection applies them in one
   * transaction). Resolves when every one is durably handled; a rejection means "deliver them again".
   */
  handleBatch?(deliveries: readonly Delivery[]): Promise<void>;
  /**
   * Optional: the consumer groups this one took over (with the topics each read). A transport that keeps
   * committed offsets (Kafka) starts a group that has none of its own where those left off: on each
   * partition the lowest offset any of them committed, or the beginning where one of them that reads the
   * topic committed none. Without it a new group starts at the beginning of its topics.
   */
  replaces?: ReadonlyArray<{ groupId: string; topics: readonly string[] }>;
}

export interface Delivery {
  envelope: EventEnvelope;
  delivery: DeliveryInfo;
}

/**
 * How events leave a context's outbox and reach other contexts' projections. Adapters: in-process
 * (embedded mode) and Apache Kafka (distributed). Delivery is at least once; handlers are idempotent.
 */
export interface Transport {
  readonly kind: 'in-process' | 'kafka';
  /** Resolves only once the broker (or every in-process subscriber) acknowledged all messages. */
  publish(messages: readonly OutgoingMessage[]): Promise<void>;
  subscribe(subscription: Subscription): Promise<void>;
  /**
   * A transport that keeps no messages for subscribers not yet registered (in-process) refuses to publish
   * between `hold()` and `open()`: an app holds it while its contexts start and subscribe, so an outbox row
   * left unpublished by a crash is not marked published before every subscriber is there to get it.
   */
  hold?(): void;
  open?(): void;
  close(): Promise<void>;
}

/** Why a held transport refused to publish: the relay leaves the rows unpublished and tries again. */
export class TransportNotOpenError extends Error {
  constructor() {
    super('the transport is not open yet: subscribers are still being registered');
    this.name = 'TransportNotOpenError';
  }
}
