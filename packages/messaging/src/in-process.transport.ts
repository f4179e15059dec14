import type { EventEnvelope } from '@rigmarket/contracts';
import {
  type OutgoingMessage,
  type Subscription,
  type Transport,
  TransportNotOpenError,
} from '@rigmarket/event-sourcing';

export interface DeadLetter {
  groupId: string;
  envelope: EventEnvelope;
  error: string;
}

function logDeadLetter(letter: DeadLetter): void {
  process.stderr.write(
    `ERROR [InProcessTransport] ${letter.groupId} gave up on event ${letter.envelope.eventId} (${letter.envelope.type}, ${letter.envelope.streamId}@${letter.envelope.streamPosition}): ${letter.error}\n`,
  );
}

/**
 * Embedded mode's transport: publish awaits every subscribed group's handler, in order, so per-stream
 * order and at-least-once delivery hold as with Kafka. A handler that keeps failing is kept in
 * `deadLetters` and logged at error after `maxAttempts` instead of blocking every other context. The
 * platform's handlers park what they cannot apply in their own dead-letter tables and resolve, so this is
 * reached only when even that failed (the database away).
 */
export class InProcessTransport implements Transport {
  readonly kind = 'in-process' as const;
  readonly deadLetters: DeadLetter[] = [];
  private readonly subscriptions: Subscription[] = [];
  private readonly offsets = new Map<string, number>();
  private chain: Promise<void> = Promise.resolve();
  private held = false;

  constructor(
    private readonly maxAttempts = 3,
    private readonly onDeadLetter: (letter: DeadLetter) => void = logDeadLetter,
  ) {}

  async subscribe(subscription: Subscription): Promise<void> {
    this.subscriptions.push(subscription);
  }

  /**
   * Unlike Kafka, this transport keeps nothing for a subscriber that registers later: a message published
   * before then is gone for it. So an app holds the transport while it starts (publish is refused, the
   * relays keep their rows and try again) and opens it once every context and reactor has subscribed.
   */
  hold(): void {
    this.held = true;
  }

  open(): void {
    this.held = false;
  }

  publish(messages: readonly OutgoingMessage[]): Promise<void> {
    if (this.held) return Promise.reject(new TransportNotOpenError());
    // One delivery at a time, so two relays cannot interleave one group's handling.
    const run = this.chain.then(() => this.deliver(messages));
    this.chain = run.catch(() => undefined);
    return run;
  }

  private async deliver(messages: readonly OutgoingMessage[]): Promise<void> {
    const numbered = messages.map((message) => {
      const offset = this.offsets.get(message.topic) ?? 0;
      this.offsets.set(message.topic, offset + 1);
      return { message, offset };
    });
    // Each group gets the published messages in order: all at once when it takes batches (a projection
    // applies them in one transaction), else one by one.
    for (const subscription of this.subscriptions) {
      const mine = numbered.filter(({ message }) => subscription.topics.includes(message.topic));
      if (mine.length === 0) continue;
      if (subscription.handleBatch && mine.length > 1) {
        await this.handleBatchWithRetries(subscription, mine);
        continue;
      }
      for (const { message, offset } of mine) await this.handleWithRetries(subscription, message, offset);
    }
  }

  private async handleBatchWithRetries(
    subscription: Subscription,
    batch: ReadonlyArray<{ message: OutgoingMessage; offset: number }>,
  ): Promise<void> {
    const deliveries = batch.map(({ message, offset }) => ({
      envelope: message.envelope,
      delivery: { topic: message.topic, partition: 0, offset: String(offset) },
    }));
    for (let attempt = 1; ; attempt += 1) {
      try {
        await subscription.handleBatch!(deliveries);
        return;
      } catch (error) {
        if (attempt >= this.maxAttempts) {
          for (const { message } of batch) {
            const letter = {
              groupId: subscription.groupId,
              envelope: message.envelope,
              error: String(error),
            };
            this.deadLetters.push(letter);
            this.onDeadLetter(letter);
          }
          return;
        }
      }
    }
  }

  private async handleWithRetries(
    subscription: Subscription,
    message: OutgoingMessage,
    offset: number,
  ): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        await subscription.handle(message.envelope, {
          topic: message.topic,
          partition: 0,
          offset: String(offset),
        });
        return;
      } catch (error) {
        if (attempt >= this.maxAttempts) {
          const letter = { groupId: subscription.groupId, envelope: message.envelope, error: String(error) };
          this.deadLetters.push(letter);
          this.onDeadLetter(letter);
          return;
        }
      }
    }
  }

  async close(): Promise<void> {
    await this.chain;
  }
}
