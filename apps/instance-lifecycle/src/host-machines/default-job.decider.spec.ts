import { deciderSpec } from '@rigmarket/testing';
import { type DefaultJobEvent, DefaultJobErrors, defaultJobDecider } from './default-job.decider';

const AT = '2026-05-01T12:00:00.000Z';
const job = {
  image: 'busybox',
  args: ['sleep', '3600'],
  priceGpu: 0.1,
  priceInetUp: 0.01,
  priceInetDown: 0.01,
};
const set: DefaultJobEvent = {
  type: 'DefaultJobSet',
  data: { machineId: 5, hostId: 3, job, instanceId: 11, at: AT },
};
const spec = deciderSpec(defaultJobDecider);
const base = { at: AT, machineId: 5, requesterId: 3, ownerId: 3 };

describe('default job decider', () => {
  it("sets the owner's default job with its instance, and sets it again", () => {
    spec
      .given([])
      .when({ ...base, type: 'SetDefaultJob', job, instanceId: 11 })
      .then([set]);
    spec
      .given([set])
      .when({ ...base, type: 'SetDefaultJob', job: { ...job, image: 'alpine' }, instanceId: null })
      .then([
        {
          type: 'DefaultJobSet',
          data: { machineId: 5, hostId: 3, job: { ...job, image: 'alpine' }, instanceId: null, at: AT },
        },
      ]);
  });

  it('removes it once, naming its instance; removing none changes nothing', () => {
    spec
      .given([set])
      .when({ ...base, type: 'RemoveDefaultJob' })
      .then([{ type: 'DefaultJobRemoved', data: { machineId: 5, hostId: 3, instanceId: 11, at: AT } }]);
    spec
      .given([set, { type: 'DefaultJobRemoved', data: { machineId: 5, hostId: 3, instanceId: 11, at: AT } }])
      .when({ ...base, type: 'RemoveDefaultJob' })
      .thenNothingHappened();
  });

  it("reports another host's machine, or a missing one, as missing", () => {
    spec
      .given([])
      .when({ ...base, requesterId: 4, type: 'SetDefaultJob', job, instanceId: null })
      .thenThrows(DefaultJobErrors.notFound);
    spec
      .given([set])
      .when({ ...base, ownerId: null, type: 'RemoveDefaultJob' })
      .thenThrows(DefaultJobErrors.notFound);
  });
});
