import type { AgentCopyEvent } from '@rigmarket/contracts';
import { deciderSpec } from '@rigmarket/testing';
import { agentCopyDecider, hostAgentDecider } from './agent-copy.decider';

const AT = '2026-05-01T12:00:00.000Z';
const spec = deciderSpec(agentCopyDecider);
const job = { jobId: 9, instanceId: 21, at: AT };
const started: AgentCopyEvent = {
  type: 'AgentCopyStarted',
  data: { jobId: 9, instanceId: 21, srcInstanceId: 20, totalBytes: 1000, at: AT },
};
const progressed = (bytesCopied: number): AgentCopyEvent => ({
  type: 'AgentCopyProgressed',
  data: { jobId: 9, instanceId: 21, bytesCopied, totalBytes: 1000, at: AT },
});

describe('a copy carried out by two host agents', () => {
  it('starts once, when the source agent has found the path', () => {
    spec
      .given([])
      .when({ ...job, type: 'StartAgentCopy', srcInstanceId: 20, totalBytes: 1000 })
      .then([started]);
    spec
      .given([started])
      .when({ ...job, type: 'StartAgentCopy', srcInstanceId: 20, totalBytes: 1000 })
      .thenNothingHappened();
  });

  it('records progress only forward, and only while running', () => {
    spec
      .given([started])
      .when({ ...job, type: 'ReportAgentCopyProgress', bytesCopied: 400 })
      .then([progressed(400)]);
    spec
      .given([started, progressed(400)])
      .when({ ...job, type: 'ReportAgentCopyProgress', bytesCopied: 400 })
      .thenNothingHappened();
    spec
      .given([])
      .when({ ...job, type: 'ReportAgentCopyProgress', bytesCopied: 400 })
      .thenNothingHappened();
  });

  it('completes a running copy with the bytes the destination extracted', () => {
    spec
      .given([started, progressed(400)])
      .when({ ...job, type: 'CompleteAgentCopy', bytesCopied: 1000 })
      .then([{ type: 'AgentCopyCompleted', data: { jobId: 9, instanceId: 21, bytesCopied: 1000, at: AT } }]);
  });

  it('fails before or during the transfer (no container, path missing, an agent gone)', () => {
    const failed: AgentCopyEvent = {
      type: 'AgentCopyFailed',
      data: { jobId: 9, instanceId: 21, reason: 'Source path /x not found in instance 20', at: AT },
    };
    spec
      .given([])
      .when({ ...job, type: 'FailAgentCopy', reason: 'Source path /x not found in instance 20' })
      .then([failed]);
    spec
      .given([started])
      .when({ ...job, type: 'FailAgentCopy', reason: 'Source path /x not found in instance 20' })
      .then([failed]);
  });

  it('is aborted by a cancel with the bytes extracted so far, and then ignores every late report', () => {
    const aborted: AgentCopyEvent = {
      type: 'AgentCopyAborted',
      data: { jobId: 9, instanceId: 21, bytesCopied: 400, at: AT },
    };
    spec
      .given([started, progressed(400)])
      .when({ ...job, type: 'AbortAgentCopy' })
      .then([aborted]);
    spec
      .given([started, progressed(400), aborted])
      .when({ ...job, type: 'ReportAgentCopyProgress', bytesCopied: 800 })
      .thenNothingHappened();
    spec
      .given([started, progressed(400), aborted])
      .when({ ...job, type: 'CompleteAgentCopy', bytesCopied: 1000 })
      .thenNothingHappened();
    spec
      .given([started, progressed(400), aborted])
      .when({ ...job, type: 'FailAgentCopy', reason: 'stream closed' })
      .thenNothingHappened();
    spec
      .given([started, progressed(400), aborted])
      .when({ ...job, type: 'AbortAgentCopy' })
      .thenNothingHappened();
  });
});

describe('a host agent machine', () => {
  it('is enrolled once, at its first accepted hello', () => {
    const enroll = { type: 'EnrollHostAgent' as const, machineId: 5, ownerId: 2, driver: 'docker', at: AT };
    const enrolled = {
      type: 'HostAgentEnrolled' as const,
      data: { machineId: 5, ownerId: 2, driver: 'docker', at: AT },
    };
    deciderSpec(hostAgentDecider).given([]).when(enroll).then([enrolled]);
    deciderSpec(hostAgentDecider).given([enrolled]).when(enroll).thenNothingHappened();
  });
});
