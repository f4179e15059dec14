import { ChangeBidHandler } from './change-bid/change-bid.handler';
import { ChangeInstanceHandler } from './change-instance/change-instance.handler';
import { CreateInstanceHandler } from './create-instance/create-instance.handler';
import { DestroyInstanceHandler } from './destroy-instance/destroy-instance.handler';
import {
  AttachInstanceSshKeyHandler,
  DetachInstanceSshKeyHandler,
} from './instance-ssh-keys/instance-ssh-keys.handlers';
import { GetInstanceHandler } from './queries/get-instance.query';
import { InstanceFiltersHandler } from './queries/instance-filters.query';
import { InstanceHistoryHandler } from './queries/instance-history.query';
import { ListAllInstancesHandler, POLL_ANSWER_CACHE } from './queries/list-all-instances.query';
import { ListInstancesHandler } from './queries/list-instances.query';
import { RestartInstanceHandler } from './restart-instance/restart-instance.handler';
import { TakeSnapshotHandler } from './take-snapshot/take-snapshot.handler';

/** The command and query handlers of the instance use cases, one folder each (docs/architecture.md). */
export const INSTANCE_HANDLERS = [
  CreateInstanceHandler,
  ChangeInstanceHandler,
  ChangeBidHandler,
  RestartInstanceHandler,
  DestroyInstanceHandler,
  AttachInstanceSshKeyHandler,
  DetachInstanceSshKeyHandler,
  TakeSnapshotHandler,
  GetInstanceHandler,
  ListInstancesHandler,
  POLL_ANSWER_CACHE,
  ListAllInstancesHandler,
  InstanceFiltersHandler,
  InstanceHistoryHandler,
];
