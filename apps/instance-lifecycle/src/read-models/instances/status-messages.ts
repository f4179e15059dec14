import type { InstanceConfig } from '@rigmarket/contracts';

/** The status messages an instance row shows for what happened to it (the projection and host commands). */
/** status_msg while marketplace creates the instance's volume (volume_info create_new). */
export const waitingForVolumeMsg = (v: NonNullable<InstanceConfig['newVolume']>): string =>
  `Waiting for the volume: creating ${v.sizeGb} GB from volume offer ${v.volumeOfferId}; the container starts once it exists`;

export const CREDIT_RELEASED_MSG =
  'Stopped: the account ran out of credit and the GPUs were released. Add credit, then start the instance again (it takes GPUs again if they are free).';
export const OUTBID_MSG =
  'Outbid: a higher bid or an on-demand rental took the GPUs; raise the bid (bid_price) and start the instance again';
