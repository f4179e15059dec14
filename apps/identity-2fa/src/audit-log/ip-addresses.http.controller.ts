import { Controller, Get, Inject } from '@nestjs/common';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import {
  ApiContract,
  Authenticated,
  type Call,
  CallOf,
  RequirePermission,
  arrayOf,
  int,
  namedSchema,
  nullable,
  num,
  objectOf,
  str,
  succeeded,
} from '@rigmarket/http-kit';
import { IDENTITY_RUNTIME } from '../identity.tokens';
import { listIpAddresses } from '../read-models/audit-log/queries';

const IP_ADDRESS = namedSchema(
  'IpAddressSeen',
  objectOf({ ip: str, first_seen: num, last_seen: num, actions: int, first_location: nullable(str) }),
);

/**
 * `vastai show ipaddrs`: the addresses the caller's account acted from, read from the audit log (each
 * audited action keeps its client address), so only the caller's own.
 */
@Controller('api/v0/users/me/ipaddrs')
@Authenticated()
export class IpAddressesController {
  constructor(@Inject(IDENTITY_RUNTIME) private readonly runtime: ContextRuntime) {}

  @Get()
  @RequirePermission('user_read')
  @ApiContract({ query: { owner: str }, ok: succeeded({ results: arrayOf(IP_ADDRESS) }) })
  async list(@CallOf() { caller }: Call) {
    return { success: true, results: await listIpAddresses(this.runtime.db, caller.userId) };
  }
}
