import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Inject,
  Param,
  ParseIntPipe,
  Post,
  Put,
} from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiError } from '@rigmarket/contracts';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { ApiContract, Authenticated, type Call, CallOf, RequirePermission } from '@rigmarket/http-kit';
import { IsOptional } from 'class-validator';
import { IDENTITY_RUNTIME } from '../identity.tokens';
import { listSshKeys } from '../read-models/ssh-keys/queries';
import { AddSshKeyCommand, DeleteSshKeyCommand, ReplaceSshKeyCommand } from './ssh-keys.handlers';
import { ANSWERS, BODIES } from '../identity.openapi';

export class SshKeyRequest {
  /** One OpenSSH public key line (checked by parsePublicKey: type, blob, length). */
  @IsOptional()
  ssh_key?: unknown;

  /** `vastai update ssh-key` repeats the id in the body; the path's id counts. */
  @IsOptional()
  id?: unknown;
}

const keyIdPipe = new ParseIntPipe({
  exceptionFactory: () => ApiError.badRequest('The SSH key id must be an integer'),
});

/** The account's SSH public keys, as `vastai create|show|update|delete ssh-key` call them. */
@Controller('api/v0/ssh')
@Authenticated()
export class SshKeysController {
  constructor(
    private readonly commands: CommandBus,
    @Inject(IDENTITY_RUNTIME) private readonly runtime: ContextRuntime,
  ) {}

  @Post()
  @HttpCode(200)
  @RequirePermission('user_write')
  @ApiContract({
    body: BODIES.sshKey,
    ok: ANSWERS.sshKey,
    errors: { 400: ['invalid_ssh_key'], 409: ['ssh_key_exists'] },
  })
  async create(@Body() body: SshKeyRequest, @CallOf() { caller, metadata }: Call) {
    const key = await this.commands.execute(new AddSshKeyCommand(caller.userId, body.ssh_key, metadata));
    return { success: true, key };
  }

  @Get()
  @RequirePermission('user_read')
  @ApiContract({ ok: ANSWERS.sshKeys })
  async list(@CallOf() { caller }: Call) {
    return { success: true, ssh_keys: await listSshKeys(this.runtime.db, caller.userId) };
  }

  @Put(':id')
  @RequirePermission('user_write')
  @ApiContract({
    body: BODIES.sshKey,
    ok: ANSWERS.sshKey,
    errors: { 400: ['invalid_ssh_key'], 404: ['ssh_key_not_found'] },
  })
  async update(
    @Param('id', keyIdPipe) id: number,
    @Body() body: SshKeyRequest,
    @CallOf() { caller, metadata }: Call,
  ) {
    const key = await this.commands.execute(
      new ReplaceSshKeyCommand(caller.userId, id, body.ssh_key, metadata),
    );
    return { success: true, key };
  }

  @Delete(':id')
  @RequirePermission('user_write')
  @ApiContract({ ok: ANSWERS.msg, errors: { 404: ['ssh_key_not_found'] } })
  async remove(@Param('id', keyIdPipe) id: number, @CallOf() { caller, metadata }: Call) {
    await this.commands.execute(new DeleteSshKeyCommand(caller.userId, id, metadata));
    return { success: true, msg: `SSH key ${id} deleted` };
  }
}
