import { Body, Controller, Delete, Get, HttpCode, Post, Put, Query as QueryParam } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiError } from '@rigmarket/contracts';
import {
  ApiContract,
  Authenticated,
  type Call,
  CallOf,
  isJsonObject,
  RequirePermission,
} from '@rigmarket/http-kit';
import { templateChanges, templateContentForCreate } from './template-content';
import {
  CreateTemplateCommand,
  DeleteTemplateCommand,
  EditTemplateCommand,
  SearchTemplatesQuery,
  parseTemplateFilters,
} from './templates.handlers';
import { ANSWERS, BODIES, QUERIES } from '../marketplace.openapi';

/**
 * Templates (spec "Templates", docs/client-compat.md 2.11). Bodies are read raw: nulls mean "unchanged".
 * vastai 1.9 edits through PUT /api/v1/template/ (with id and hash_id), so the v1 path is served too.
 */
@Controller(['api/v0/template', 'api/v1/template'])
@Authenticated()
export class TemplatesController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @Get()
  @RequirePermission('user_read')
  @ApiContract({ query: QUERIES.templateSearch, ok: ANSWERS.templates })
  async search(
    @QueryParam('select_filters') selectFilters: unknown,
    @Body() body: unknown,
    @CallOf() { caller: principal }: Call,
  ) {
    const raw = selectFilters ?? (isJsonObject(body) ? body.select_filters : undefined);
    return {
      success: true,
      templates: await this.queries.execute(
        new SearchTemplatesQuery(principal.userId, parseTemplateFilters(raw)),
      ),
    };
  }

  @Post()
  @HttpCode(200)
  @RequirePermission('user_write')
  @ApiContract({ body: BODIES.createTemplate, ok: ANSWERS.template, errors: { 409: ['template_exists'] } })
  async create(@Body() body: unknown, @CallOf() { caller: principal, metadata }: Call) {
    if (!isJsonObject(body)) throw ApiError.badRequest('The body must be a JSON object');
    const template = await this.commands.execute(
      new CreateTemplateCommand(principal.userId, templateContentForCreate(body), metadata),
    );
    return { success: true, msg: `Template ${template.name} created`, template };
  }

  @Put()
  @RequirePermission('user_write')
  @ApiContract({ body: BODIES.editTemplate, ok: ANSWERS.template, errors: { 404: ['no_such_template'] } })
  async edit(@Body() body: unknown, @CallOf() { caller: principal, metadata }: Call) {
    if (!isJsonObject(body)) throw ApiError.badRequest('The body must be a JSON object');
    if (typeof body.hash_id !== 'string' || body.hash_id === '')
      throw ApiError.badRequest('hash_id is required');
    const template = await this.commands.execute(
      new EditTemplateCommand(principal.userId, body.hash_id, templateChanges(body), metadata),
    );
    return { success: true, msg: `Template ${template.name} updated`, template };
  }

  @Delete()
  @RequirePermission('user_write')
  @ApiContract({
    body: BODIES.deleteTemplate,
    query: QUERIES.templateDelete,
    ok: ANSWERS.msg,
    errors: { 404: ['no_such_template'] },
  })
  async remove(
    @Body() body: unknown,
    @QueryParam() query: Record<string, unknown>,
    @CallOf() { caller: principal, metadata }: Call,
  ) {
    const source = { ...query, ...(isJsonObject(body) ? body : {}) };
    const rawId = source.template_id ?? source.id;
    let ref: { templateId?: number; hashId?: string };
    if (rawId !== undefined && rawId !== null && rawId !== '') {
      const templateId = Number(rawId);
      if (!Number.isInteger(templateId))
        throw ApiError.badRequest('template_id must be the numeric template id');
      ref = { templateId };
    } else if (typeof source.hash_id === 'string' && source.hash_id !== '') {
      ref = { hashId: source.hash_id };
    } else {
      throw ApiError.badRequest('template_id or hash_id is required');
    }
    const { templateId } = await this.commands.execute(
      new DeleteTemplateCommand(principal.userId, ref, metadata),
    );
    return { success: true, msg: `Template ${templateId} deleted` };
  }
}
