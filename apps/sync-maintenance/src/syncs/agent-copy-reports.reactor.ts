import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import {
  type AgentCopyCompleted,
  type AgentCopyFailed,
  type AgentCopyProgressed,
  type AgentCopyStarted,
  refusalCode,
} from '@rigmarket/contracts';
import { causedBy, type ContextRuntime, type EnvelopeOf, type Reactor } from '@rigmarket/event-sourcing';
import { SYNC_RUNTIME } from '../sync-maintenance.tokens';
import { SyncErrors } from './sync.decider';
import { runSyncCommand } from './sync-workflow';

/**
 * A copy left to the host agents (`executor: 'agents'`) is carried out by instance-lifecycle's relay, whose
 * public agentcopy events become the job's commands here: started, progress, completed, failed. The job
 * stays this context's aggregate, so status_msg and remote_sync read as for any other copy. A report about
 * a job that is no longer active (canceled meanwhile) is refused by the decider and dropped; the relay
 * has stopped the agents already. Queued from the delivery and run after it (ADR 0009).
 */
type AgentCopyReport = AgentCopyStarted | AgentCopyProgressed | AgentCopyCompleted | AgentCopyFailed;

@Injectable()
export class AgentCopyReportsReactor implements Reactor<AgentCopyReport>, OnApplicationBootstrap {
  readonly name = 'agent_copy_reports';
  readonly sources = [{ context: 'instance', streamType: 'agentcopy' }] as const;
  readonly eventTypes = [
    'AgentCopyStarted',
    'AgentCopyProgressed',
    'AgentCopyCompleted',
    'AgentCopyFailed',
  ] as const;

  constructor(@Inject(SYNC_RUNTIME) private readonly runtime: ContextRuntime) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.runtime.addReactors([this]);
  }

  async react(event: EnvelopeOf<AgentCopyReport>): Promise<void> {
    const metadata = causedBy(event);
    const { instanceId, jobId } = event.data;
    try {
      switch (event.type) {
        case 'AgentCopyStarted':
          await runSyncCommand(
            this.runtime,
            { type: 'StartSync', instanceId, jobId, totalBytes: event.data.totalBytes },
            metadata,
          );
          return;
        case 'AgentCopyProgressed':
          await runSyncCommand(
            this.runtime,
            {
              type: 'ReportProgress',
              instanceId,
              jobId,
              bytesCopied: event.data.bytesCopied,
              totalBytes: event.data.totalBytes,
            },
            metadata,
          );
          return;
        case 'AgentCopyCompleted':
          await runSyncCommand(
            this.runtime,
            { type: 'CompleteSync', instanceId, jobId, bytesCopied: event.data.bytesCopied },
            metadata,
          );
          return;
        case 'AgentCopyFailed':
          await runSyncCommand(
            this.runtime,
            { type: 'FailSync', instanceId, jobId, reason: event.data.reason },
            metadata,
          );
          return;
      }
    } catch (error) {
      // Canceled (or completed, on a redelivery) meanwhile: nothing to record.
      if (refusalCode(error) === SyncErrors.notActive) return;
      throw error;
    }
  }
}
