import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { ApiError } from '@rigmarket/contracts';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { allocationDecider, allocationStreamId } from '../../allocation/allocation.decider';
import { INSTANCE_RUNTIME } from '../../instance-lifecycle.tokens';
import { findMachine } from '../../read-models/market-machines/queries';
import { ALLOCATION_ATTEMPTS, checkBidBound, runInstanceCommand } from '../instance-commands';
import { instanceDecider, instanceStreamId } from '../instance.decider';
import { ChangeBidCommand } from './change-bid.command';

/** At least the machine's min bid; a held allocation takes the new bid. */
@CommandHandler(ChangeBidCommand)
export class ChangeBidHandler implements ICommandHandler<ChangeBidCommand> {
  constructor(@Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime) {}

  async execute({ requesterId, instanceId, price, metadata }: ChangeBidCommand): Promise<void> {
    const { state } = await this.runtime.runner.load(instanceStreamId(instanceId), instanceDecider);
    if (state.status === 'active' && state.renter === requesterId) {
      checkBidBound(price, state.numGpus);
      const machine = await findMachine(this.runtime.db, state.machineId);
      const minimum = (machine?.ask?.minBid ?? 0) * state.numGpus;
      if (price < minimum)
        throw ApiError.badRequest(`price ${price} is below this machine's minimum bid of ${minimum} $/hour`);
    }
    await runInstanceCommand(this.runtime, instanceId, { type: 'ChangeBid', requesterId, price }, metadata);
    if (state.status === 'active' && !state.outbid) {
      await this.runtime.runner.run(
        allocationStreamId(state.machineId),
        allocationDecider,
        { type: 'ChangeBid', machineId: state.machineId, instanceId, bid: price },
        metadata,
        { maxAttempts: ALLOCATION_ATTEMPTS },
      );
    }
  }
}
