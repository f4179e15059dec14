import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { ApiError, type CreditTransferred, type EventMetadata } from '@rigmarket/contracts';
import { causedBy, type ContextRuntime, type EnvelopeOf, type Reactor } from '@rigmarket/event-sourcing';
import { MARKETPLACE_RUNTIME } from '../marketplace.tokens';
import { findAccount } from '../read-models/accounts/queries';
import { runLedgerCommand } from './ledger.handlers';

/**
 * `vastai transfer credit RECIPIENT AMOUNT`: the sender's ledger records the credit leaving it
 * (CreditTransferred, refused unless the balance covers it), and CreditTransfersReactor records it arriving
 * on the recipient's ledger (CreditReceived). Answers the sender's balance after it, in micros.
 */
export class TransferCreditCommand extends Command<{ balance: number; recipientId: number }> {
  constructor(
    readonly senderId: number,
    /** An e-mail or a numeric account id, as the CLI sends it. */
    readonly recipient: string,
    readonly amountMicros: number,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

@CommandHandler(TransferCreditCommand)
export class TransferCreditHandler implements ICommandHandler<TransferCreditCommand> {
  constructor(@Inject(MARKETPLACE_RUNTIME) private readonly runtime: ContextRuntime) {}
  async execute(c: TransferCreditCommand): Promise<{ balance: number; recipientId: number }> {
    const recipientId = await findAccount(this.runtime.db, c.recipient);
    if (recipientId === null)
      throw ApiError.notFound(`No account ${JSON.stringify(c.recipient)} to transfer to`, 'user_not_found');
    const balance = await runLedgerCommand(
      this.runtime,
      { type: 'TransferCredit', userId: c.senderId, recipientId, amountMicros: c.amountMicros },
      c.metadata,
    );
    return { balance, recipientId };
  }
}

/**
 * A recorded CreditTransferred -> the recipient receives the same amount (CreditReceived). A reactor (ADR
 * 0009), as host earnings are: queued durably on delivery, retried until appended, and recorded once per
 * transfer (its event id; a unique index backs the look-up), so a redelivery adds nothing.
 */
@Injectable()
export class CreditTransfersReactor implements Reactor<CreditTransferred>, OnApplicationBootstrap {
  readonly name = 'credit_transfers';
  readonly sources = [{ context: 'marketplace', streamType: 'ledger' }] as const;
  readonly eventTypes = ['CreditTransferred'] as const;

  constructor(@Inject(MARKETPLACE_RUNTIME) private readonly runtime: ContextRuntime) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.runtime.addReactors([this]);
  }

  async react(event: EnvelopeOf<CreditTransferred>): Promise<void> {
    await runLedgerCommand(
      this.runtime,
      {
        type: 'ReceiveCredit',
        userId: event.data.recipientId,
        senderId: event.data.userId,
        transferId: event.eventId,
        amountMicros: event.data.amountMicros,
      },
      causedBy(event),
    );
  }
}
