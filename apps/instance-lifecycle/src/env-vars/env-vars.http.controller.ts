import { Body, Controller, Delete, Get, HttpCode, Inject, Post, Put } from '@nestjs/common';
import { ApiError, type EventMetadata } from '@rigmarket/contracts';
import type { CommandBody, ContextRuntime } from '@rigmarket/event-sourcing';
import {
  ApiContract,
  Authenticated,
  type Call,
  CallOf,
  isJsonObject,
  RequirePermission,
} from '@rigmarket/http-kit';
import { ANSWERS, BODIES } from '../instance-lifecycle.openapi';
import { ENV_VAR_BOX, INSTANCE_RUNTIME } from '../instance-lifecycle.tokens';
import { accountEnvVars } from '../read-models/env-vars/queries';
import type { EnvVarBox } from './env-var-box';
import { ENV_VAR_LIMITS, type EnvVarCommand, envVarsDecider, envVarsStreamId } from './env-var.decider';

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `{key, value?}` from the body: a shell-safe name, a bounded value. Neither is ever logged. */
function parse(body: unknown, withValue: boolean): { name: string; value: string } {
  if (!isJsonObject(body)) throw ApiError.badRequest('The body must be a JSON object {"key", "value"}');
  const name = body.key;
  if (typeof name !== 'string' || name.length > ENV_VAR_LIMITS.nameLength || !NAME.test(name))
    throw ApiError.badRequest(
      `key must be an environment variable name (letters, digits and _, not starting with a digit; at most ${ENV_VAR_LIMITS.nameLength} characters)`,
    );
  if (!withValue) return { name, value: '' };
  const value = body.value;
  if (
    typeof value !== 'string' ||
    Buffer.byteLength(value) > ENV_VAR_LIMITS.valueBytes ||
    value.includes('\0')
  )
    throw ApiError.badRequest(`value must be a string of at most ${ENV_VAR_LIMITS.valueBytes} bytes`);
  return { name, value };
}

/**
 * The caller's own environment variables, as `vastai show|create|update|delete env-var` call them
 * (`/api/v0/secrets/`): one stream per account, so no route reaches another account's. Added to the env of
 * the account's instances when they are provisioned (HostCommandDispatcher).
 */
@Controller('api/v0/secrets')
@Authenticated()
export class EnvVarsController {
  constructor(
    @Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime,
    @Inject(ENV_VAR_BOX) private readonly box: EnvVarBox,
  ) {}

  private async run(command: CommandBody<EnvVarCommand>, metadata: EventMetadata) {
    await this.runtime.runner.run(envVarsStreamId(command.userId), envVarsDecider, command, metadata);
  }

  /** `{secrets: {name: value}}`; the CLI masks the values unless asked to show them. */
  @Get()
  @RequirePermission('user_read')
  @ApiContract({ ok: ANSWERS.envVars })
  async list(@CallOf() { caller }: Call) {
    const { vars } = await accountEnvVars(this.runtime.db, this.box, caller.userId);
    return { success: true, secrets: vars };
  }

  @Post()
  @HttpCode(200)
  @RequirePermission('user_write')
  @ApiContract({ body: BODIES.envVar, ok: ANSWERS.envVarChanged, errors: { 409: ['env_var_exists'] } })
  async create(@Body() body: unknown, @CallOf() { caller, metadata }: Call) {
    const { name, value } = parse(body, true);
    const valueSealed = this.box.seal(value, caller.userId, name);
    await this.run({ type: 'CreateEnvVar', userId: caller.userId, name, valueSealed }, metadata);
    return { success: true, msg: `Environment variable ${name} created.` };
  }

  @Put()
  @RequirePermission('user_write')
  @ApiContract({ body: BODIES.envVar, ok: ANSWERS.envVarChanged, errors: { 404: ['env_var_not_found'] } })
  async update(@Body() body: unknown, @CallOf() { caller, metadata }: Call) {
    const { name, value } = parse(body, true);
    const valueSealed = this.box.seal(value, caller.userId, name);
    await this.run({ type: 'UpdateEnvVar', userId: caller.userId, name, valueSealed }, metadata);
    return { success: true, msg: `Environment variable ${name} updated.` };
  }

  @Delete()
  @RequirePermission('user_write')
  @ApiContract({ body: BODIES.envVar, ok: ANSWERS.envVarChanged, errors: { 404: ['env_var_not_found'] } })
  async remove(@Body() body: unknown, @CallOf() { caller, metadata }: Call) {
    const { name } = parse(body, false);
    await this.run({ type: 'DeleteEnvVar', userId: caller.userId, name }, metadata);
    return { success: true, msg: `Environment variable ${name} deleted.` };
  }
}
