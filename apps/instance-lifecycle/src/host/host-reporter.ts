import { Inject, Injectable, Logger } from '@nestjs/common';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { INSTANCE_RUNTIME } from '../instance-lifecycle.tokens';
import { type HostReport, instanceDecider, instanceStreamId } from '../instances/instance.decider';

/** Turns a host's report into an InstanceStateChanged on the instance stream (the decider guards it). */
@Injectable()
export class HostReporter {
  private readonly logger = new Logger('HostReporter');
  constructor(@Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime) {}

  async report(instanceId: number, report: HostReport): Promise<void> {
    try {
      await this.runtime.runner.run(
        instanceStreamId(instanceId),
        instanceDecider,
        { type: 'ReportHostState', ...report },
        { correlationId: `host-report-${instanceId}`, causationId: `host-report-${instanceId}` },
      );
    } catch (error) {
      this.logger.warn(`report ${report.actualStatus} for instance ${instanceId} refused: ${String(error)}`);
    }
  }
}
