import { Body, Controller, Put } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiContract, Authenticated, type Call, CallOf, RequirePermission } from '@rigmarket/http-kit';
import { parseCreateRequest } from '../create-instance/create-request';
import { LaunchInstanceDto } from '../instances.dto';
import { LaunchInstanceCommand, parseLaunchQuery } from './launch';
import { ANSWERS, BODIES, RENT_ERRORS } from '../../instance-lifecycle.openapi';

/**
 * `vastai launch instance -g GPU -n N -i IMAGE [-r REGION]`: rents the cheapest matching offer that can be
 * had now (launch.ts). Answers like a create, plus the offer taken as ask_id.
 */
@Controller('api/v0/launch_instance')
@Authenticated()
export class LaunchController {
  constructor(private readonly commands: CommandBus) {}

  @Put()
  @RequirePermission('instance_write')
  @ApiContract({ body: BODIES.launch, ok: ANSWERS.launched, errors: RENT_ERRORS })
  async launch(@Body() body: LaunchInstanceDto, @CallOf() { caller: principal, metadata }: Call) {
    const { q, ...fields } = body;
    const criteria = parseLaunchQuery(q);
    const request = parseCreateRequest({ ...fields });
    const created = await this.commands.execute(
      new LaunchInstanceCommand(principal.userId, criteria, request, metadata),
    );
    return {
      success: true,
      new_contract: created.instanceId,
      instance_api_key: created.instanceApiKey,
      ask_id: created.offerId,
    };
  }
}
