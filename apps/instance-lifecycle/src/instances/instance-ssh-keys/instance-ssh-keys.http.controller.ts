import { Body, Controller, Delete, HttpCode, Param, Post } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiContract, Authenticated, type Call, CallOf, RequirePermission } from '@rigmarket/http-kit';
import { IsOptional } from 'class-validator';
import { ANSWERS, BODIES } from '../../instance-lifecycle.openapi';
import { positiveId } from '../http-params';
import { AttachInstanceSshKeyCommand, DetachInstanceSshKeyCommand } from './instance-ssh-keys.handlers';

export class AttachSshKeyRequest {
  /** One OpenSSH public key line (checked by parsePublicKey: type, blob, length). */
  @IsOptional()
  ssh_key?: unknown;
}

/**
 * An instance's SSH public keys, as `vastai attach ssh` and `vastai detach ssh` call them: they are
 * written into the container's /root/.ssh/authorized_keys by its host (docs/instances.md, SSH keys).
 */
@Controller('api/v0/instances')
@Authenticated()
export class InstanceSshKeysController {
  constructor(private readonly commands: CommandBus) {}

  @Post(':id/ssh')
  @HttpCode(200)
  @RequirePermission('instance_write')
  @ApiContract({
    body: BODIES.sshKey,
    ok: ANSWERS.sshKeyAttached,
    errors: {
      400: ['bad_request', 'invalid_ssh_key'],
      403: ['too_many_ssh_keys'],
      404: ['no_such_instance'],
    },
  })
  async attach(
    @Param('id') idRaw: string,
    @Body() body: AttachSshKeyRequest,
    @CallOf() { caller, metadata }: Call,
  ) {
    const id = positiveId(idRaw, 'instance id');
    const key = await this.commands.execute(
      new AttachInstanceSshKeyCommand(caller.userId, id, body.ssh_key, metadata),
    );
    return { success: true, msg: `SSH key ${key.id} attached to instance ${id}`, key };
  }

  @Delete(':id/ssh/:keyId')
  @RequirePermission('instance_write')
  @ApiContract({
    ok: ANSWERS.msg,
    errors: { 400: ['bad_request'], 404: ['no_such_instance', 'ssh_key_not_found'] },
  })
  async detach(
    @Param('id') idRaw: string,
    @Param('keyId') keyRaw: string,
    @CallOf() { caller, metadata }: Call,
  ) {
    const id = positiveId(idRaw, 'instance id');
    const keyId = positiveId(keyRaw, 'ssh key id');
    await this.commands.execute(new DetachInstanceSshKeyCommand(caller.userId, id, keyId, metadata));
    return { success: true, msg: `SSH key ${keyId} detached from instance ${id}` };
  }
}
