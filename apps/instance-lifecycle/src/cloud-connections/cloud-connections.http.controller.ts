import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post } from '@nestjs/common';
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
import type { EnvVarBox } from '../env-vars/env-var-box';
import { ANSWERS, BODIES } from '../instance-lifecycle.openapi';
import { ENV_VAR_BOX, INSTANCE_RUNTIME } from '../instance-lifecycle.tokens';
import { positiveId } from '../instances/http-params';
import { accountCloudConnections, type CloudConnectionRow } from '../read-models/cloud-connections/queries';
import { sealCredentials } from './cloud-credentials';
import {
  CLOUD_CONNECTION_LIMITS,
  type CloudConnectionCommand,
  cloudConnectionsDecider,
  cloudConnectionsStreamId,
} from './cloud-connection.decider';

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
const REGION = /^[a-z0-9-]{1,64}$/;

function text(body: Record<string, unknown>, key: string, required: boolean): string {
  const value = body[key];
  if (value === undefined && !required) return '';
  if (
    typeof value !== 'string' ||
    value.trim() === '' ||
    value.length > CLOUD_CONNECTION_LIMITS.fieldLength ||
    /[\0\r\n]/.test(value)
  )
    throw ApiError.badRequest(
      `${key} must be a non-empty string of at most ${CLOUD_CONNECTION_LIMITS.fieldLength} characters`,
    );
  return value.trim();
}

/** `{name, cloud_type?, endpoint, region?, access_key_id, secret_access_key}`: only S3-compatible endpoints. */
function parse(body: unknown) {
  if (!isJsonObject(body))
    throw ApiError.badRequest(
      'The body must be a JSON object {"name", "cloud_type", "endpoint", "access_key_id", "secret_access_key"}',
    );
  const name = text(body, 'name', true);
  if (name.length > CLOUD_CONNECTION_LIMITS.nameLength || !NAME.test(name))
    throw ApiError.badRequest(
      `name must be letters, digits, '.', '_' or '-' (at most ${CLOUD_CONNECTION_LIMITS.nameLength} characters)`,
    );
  const cloudType = body.cloud_type ?? 's3';
  if (cloudType !== 's3')
    throw ApiError.badRequest(
      'cloud_type must be "s3" (an S3-compatible endpoint); no other cloud is served',
    );
  const endpoint = text(body, 'endpoint', true);
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw ApiError.badRequest('endpoint must be an http(s) URL, e.g. https://s3.example.com');
  }
  if (!['http:', 'https:'].includes(url.protocol) || url.username || url.password)
    throw ApiError.badRequest('endpoint must be an http(s) URL without credentials in it');
  const region = text(body, 'region', false) || 'us-east-1';
  if (!REGION.test(region)) throw ApiError.badRequest('region must be lower-case letters, digits and -');
  const accessKeyId = text(body, 'access_key_id', true);
  const secretAccessKey = text(body, 'secret_access_key', true);
  return {
    name,
    endpoint: url.origin + url.pathname.replace(/\/+$/, ''),
    region,
    accessKeyId,
    secretAccessKey,
  };
}

/** A connection as `vastai show connections` reads it (id, name, cloud_type); the credentials masked. */
function view(row: CloudConnectionRow) {
  return {
    id: row.connectionId,
    name: row.name,
    cloud_type: row.cloudType,
    endpoint: row.endpoint,
    region: row.region,
    access_key_id: `****${row.accessKeyHint}`,
    secret_access_key: '********',
    created_at: row.createdAt.getTime() / 1000,
  };
}

/**
 * The caller's own cloud connections (`vastai show connections`: GET /users/cloud_integrations/). The real
 * service creates them in its web console; here POST creates one and DELETE /{id}/ removes it. One stream per
 * account, so no route reaches another account's connection (404, as for one that does not exist).
 */
@Controller('api/v0/users/cloud_integrations')
@Authenticated()
export class CloudConnectionsController {
  constructor(
    @Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime,
    @Inject(ENV_VAR_BOX) private readonly box: EnvVarBox,
  ) {}

  private async run(command: CommandBody<CloudConnectionCommand>, metadata: EventMetadata) {
    await this.runtime.runner.run(
      cloudConnectionsStreamId(command.userId),
      cloudConnectionsDecider,
      command,
      metadata,
    );
  }

  /** A plain list: the CLI prints it as a table (id, name, cloud_type). */
  @Get()
  @RequirePermission('user_read')
  @ApiContract({ ok: ANSWERS.cloudConnections })
  async list(@CallOf() { caller }: Call) {
    return (await accountCloudConnections(this.runtime.db, caller.userId)).map(view);
  }

  @Post()
  @HttpCode(200)
  @RequirePermission('user_write')
  @ApiContract({
    body: BODIES.cloudConnection,
    ok: ANSWERS.cloudConnectionAdded,
    errors: { 400: ['bad_request'], 409: ['cloud_connection_exists'] },
  })
  async create(@Body() body: unknown, @CallOf() { caller, metadata }: Call) {
    const { name, endpoint, region, accessKeyId, secretAccessKey } = parse(body);
    const connectionId = await this.runtime.nextId('cloud_connection_ids');
    const credentialsSealed = sealCredentials(this.box, caller.userId, connectionId, {
      accessKeyId,
      secretAccessKey,
    });
    await this.run(
      {
        type: 'AddCloudConnection',
        userId: caller.userId,
        connectionId,
        name,
        cloudType: 's3',
        endpoint,
        region,
        accessKeyHint: accessKeyId.slice(-4),
        credentialsSealed,
      },
      metadata,
    );
    return {
      success: true,
      id: connectionId,
      msg: `Cloud connection ${name} created with id ${connectionId}.`,
    };
  }

  @Delete(':id')
  @RequirePermission('user_write')
  @ApiContract({ ok: ANSWERS.msg, errors: { 400: ['invalid_id'], 404: ['no_such_cloud_connection'] } })
  async remove(@Param('id') raw: string, @CallOf() { caller, metadata }: Call) {
    const connectionId = positiveId(raw, 'id');
    await this.run({ type: 'RemoveCloudConnection', userId: caller.userId, connectionId }, metadata);
    return { success: true, msg: `Cloud connection ${connectionId} deleted.` };
  }
}
