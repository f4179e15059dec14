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
import { RequestLogsDto } from './logs.dto';
import { ANSWERS, BODIES } from '../instance-lifecycle.openapi';

function optionalTail(raw: unknown): number | null {
  if (raw === undefined || raw === null || raw === '') return null;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw ApiError.badRequest('tail must be a number of lines');
  return n;
}

/** The public base of result_url: RIGMARKET_LOG_URL, else this server as the caller reached it. */
function logBase(request: Request): string {
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
