import { Body, Controller, Get, Header, Inject, NotFoundException, Param, Put, Req } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiError } from '@rigmarket/contracts';
import {
  ApiContract,
  Authenticated,
  type Call,
  CallOf,
  Public,
  RequirePermission,
} from '@rigmarket/http-kit';
import type { Request } from 'express';
import { LOG_STORE } from '../instance-lifecycle.tokens';
import type { LogStore } from './log-store';
import { RequestLogsCommand } from './logs.handlers';
import { ExecuteDto, RequestLogsDto } from './logs.dto';
import { ExecuteCommand } from './execute.handlers';
import { ANSWERS, BODIES } from '../instance-lifecycle.openapi';

function optionalTail(raw: unknown): number | null {
  if (raw === undefined || raw === null || raw === '') return null;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw ApiError.badRequest('tail must be a number of lines');
  return n;
}

/** The public base of result_url: RIGMARKET_LOG_URL, else this server as the caller reached it. */
export function logBase(request: Request): string {
  const configured = process.env.RIGMARKET_LOG_URL;
  if (configured) return configured.replace(/\/+$/, '');
  return `${request.protocol}://${request.get('host') ?? 'localhost'}/logs`;
}

/** PUT /api/v0/instances/request_logs/{id}/ (docs/client-compat.md 2.6): the CLI then polls result_url without auth. */
@Controller()
@Authenticated()
export class LogsController {
  constructor(
    private readonly commands: CommandBus,
    @Inject(LOG_STORE) private readonly store: LogStore,
  ) {}

  @Put('api/v0/instances/request_logs/:id')
  @RequirePermission('instance_read')
  @ApiContract({
    body: BODIES.logs,
    ok: ANSWERS.logs,
    errors: { 400: ['invalid_id'], 403: ['not_authorized'], 404: ['no_such_instance'] },
  })
  async request(
    @Param('id') idRaw: string,
    @Body() body: RequestLogsDto,
    @Req() request: Request,
    @CallOf() { caller: principal }: Call,
  ) {
    const id = Number(idRaw);
    if (!Number.isInteger(id) || id < 1) throw new ApiError(400, 'invalid_id', 'invalid instance id');
    const daemon = String(body.daemon_logs ?? '').toLowerCase() === 'true';
    const filter =
      body.filter === undefined || body.filter === null || body.filter === '' ? null : String(body.filter);
    const { file } = await this.commands.execute(
      new RequestLogsCommand(principal.userId, id, optionalTail(body.tail), filter, daemon),
    );
    return {
      success: true,
      result_url: `${logBase(request)}/${file}`,
      msg: 'Logs are being uploaded; fetch result_url',
    };
  }

  /** PUT /api/v0/instances/command/{id}/ (`vastai execute`): the output is served at result_url like logs. */
  @Put('api/v0/instances/command/:id')
  @RequirePermission('instance_write')
  @ApiContract({
    body: BODIES.execute,
    ok: ANSWERS.execute,
    errors: {
      400: ['invalid_id', 'invalid_command'],
      404: ['no_such_instance'],
      409: ['no_container'],
      503: ['host_unreachable'],
    },
  })
  async execute(
    @Param('id') idRaw: string,
    @Body() body: ExecuteDto,
    @Req() request: Request,
    @CallOf() { caller: principal }: Call,
  ) {
    const id = Number(idRaw);
    if (!Number.isInteger(id) || id < 1) throw new ApiError(400, 'invalid_id', 'invalid instance id');
    const { file } = await this.commands.execute(new ExecuteCommand(principal.userId, id, body.command));
    return {
      success: true,
      result_url: `${logBase(request)}/${file}`,
      // The CLI removes this string from the output; Rigmarket's output names container paths as they are.
      writeable_path: '',
      msg: 'Command run; fetch result_url for its output',
    };
  }

  @Get('logs/:file')
  @Public()
  @Header('Content-Type', 'text/plain; charset=utf-8')
  @ApiContract({ ok: ANSWERS.logText, mediaType: 'text/plain', errors: { 404: ['not_found'] } })
  async fetch(@Param('file') file: string) {
    const text = await this.store.get(file);
    if (text === null) throw new NotFoundException();
    return text;
  }
}
