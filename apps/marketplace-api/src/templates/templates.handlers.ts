import { Inject } from '@nestjs/common';
import { QUOTAS, enforceQuota } from '@rigmarket/http-kit';
import { Command, CommandHandler, ICommandHandler, IQueryHandler, Query, QueryHandler } from '@nestjs/cqrs';
import {
  ApiError,
  type EventMetadata,
  RegistryLoginBox,
  type TemplateContent,
  templateLoginScope,
} from '@rigmarket/contracts';
import type { ContextRuntime, CommandBody } from '@rigmarket/event-sourcing';
import { SCHEMA } from '../schema';
import { MARKETPLACE_RUNTIME, REGISTRY_LOGIN_BOX } from '../marketplace.tokens';
import { type FieldSpec, type Filter, filterSql, parseFilter } from '../offers/offer-query';
import {
  COUNT_CREATED,
  RECENT_CREATE_DATE,
  TEMPLATE_USAGE_JOIN,
} from '../read-models/template-usage/queries';
import {
  type TemplateCommand,
  TemplateErrors,
  type TemplateState,
  templateDecider,
  templateStreamId,
} from './template.decider';

type TemplateCommandBody = CommandBody<TemplateCommand>;

/** What the templates table and the API both say of a template besides its content. */
interface TemplateFacts {
  hash_id: string;
  creator_id: number;
  created_at: number;
  count_created: number;
  recent_create_date: number | null;
  recommended: boolean;
}

type TemplateRow = TemplateFacts & { template_id: number; content: TemplateContent | string };

export type TemplateView = TemplateContent & TemplateFacts & { id: number; default_tag: string };

function toView(row: TemplateRow, viewerId: number, logins: RegistryLoginBox): TemplateView {
  const content =
    typeof row.content === 'string' ? (JSON.parse(row.content) as TemplateContent) : row.content;
  const creatorId = Number(row.creator_id);
  return {
    ...content,
    // Registry credentials are stored sealed and shown, opened, to the template's creator only.
    docker_login_pass:
      creatorId === viewerId
        ? (logins.open(content.docker_login_pass, templateLoginScope(Number(row.template_id))) ?? '')
        : '',
    id: Number(row.template_id),
    hash_id: row.hash_id,
    creator_id: creatorId,
    created_at: Number(row.created_at),
    count_created: Number(row.count_created),
    recent_create_date: row.recent_create_date === null ? null : Number(row.recent_create_date),
    recommended: row.recommended,
    default_tag: content.tag,
  };
}

/** A template row with its usage (count_created, recent_create_date) from the template_usage read model. */
const VIEW_FROM = `${SCHEMA}.templates t ${TEMPLATE_USAGE_JOIN}`;
const VIEW_COLUMNS = `t.template_id, t.hash_id, t.creator_id, t.created_at, ${COUNT_CREATED} AS count_created, ${RECENT_CREATE_DATE} AS recent_create_date, t.recommended, t.content`;

async function runTemplateCommand(
  runtime: ContextRuntime,
  templateId: number,
  command: TemplateCommandBody,
  metadata: EventMetadata,
): Promise<TemplateState> {
  const result = await runtime.runner.run(templateStreamId(templateId), templateDecider, command, metadata);
  return result.state;
}

async function viewOf(
  runtime: ContextRuntime,
  logins: RegistryLoginBox,
  templateId: number,
  viewerId: number,
): Promise<TemplateView> {
  const rows = await runtime.db.query<TemplateRow>(
    `SELECT ${VIEW_COLUMNS} FROM ${VIEW_FROM} WHERE t.template_id = $1`,
    [templateId],
  );
  if (!rows[0]) throw ApiError.notFound('No such template', TemplateErrors.notFound);
  return toView(rows[0], viewerId, logins);
}

/** A hash_id (or numeric id) the caller may see -> its template id. */
async function resolveTemplateId(
  runtime: ContextRuntime,
  ref: { hashId?: string; templateId?: number },
): Promise<number> {
  if (ref.templateId !== undefined) return ref.templateId;
  const rows = await runtime.db.query<{ template_id: number }>(
    `SELECT template_id FROM ${SCHEMA}.templates WHERE hash_id = $1`,
    [ref.hashId],
  );
  if (!rows[0]) throw ApiError.notFound('No such template', TemplateErrors.notFound);
  return Number(rows[0].template_id);
}

/** Handlers that read or write templates' sealed registry passwords: the store and the sealing box. */
abstract class WithRegistryLogins {
  constructor(
    @Inject(MARKETPLACE_RUNTIME) protected readonly runtime: ContextRuntime,
    @Inject(REGISTRY_LOGIN_BOX) protected readonly logins: RegistryLoginBox,
  ) {}
}

export class CreateTemplateCommand extends Command<TemplateView> {
  constructor(
    readonly creatorId: number,
    readonly content: TemplateContent,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

@CommandHandler(CreateTemplateCommand)
export class CreateTemplateHandler
  extends WithRegistryLogins
  implements ICommandHandler<CreateTemplateCommand>
{
  async execute(command: CreateTemplateCommand): Promise<TemplateView> {
    await enforceQuota(
      this.runtime.db,
      QUOTAS.templates,
      `SELECT count(*) AS n FROM ${this.runtime.schema}.templates WHERE creator_id = $1`,
      [command.creatorId],
    );
    const templateId = await this.runtime.nextId('template_ids');
    // Sealed before the event: the password is never in the event store, the outbox or Kafka in the clear.
    const content = {
      ...command.content,
      docker_login_pass: this.logins.seal(command.content.docker_login_pass, templateLoginScope(templateId)),
    };
    await runTemplateCommand(
      this.runtime,
      templateId,
      { type: 'CreateTemplate', templateId, creatorId: command.creatorId, content },
      command.metadata,
    );
    return viewOf(this.runtime, this.logins, templateId, command.creatorId);
  }
}

export class EditTemplateCommand extends Command<TemplateView> {
  constructor(
    readonly requesterId: number,
    readonly hashId: string,
    readonly changes: Partial<TemplateContent>,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

@CommandHandler(EditTemplateCommand)
export class EditTemplateHandler extends WithRegistryLogins implements ICommandHandler<EditTemplateCommand> {
  async execute(command: EditTemplateCommand): Promise<TemplateView> {
    const templateId = await resolveTemplateId(this.runtime, { hashId: command.hashId });
    const changes =
      command.changes.docker_login_pass === undefined
        ? command.changes
        : {
            ...command.changes,
            docker_login_pass: this.logins.seal(
              command.changes.docker_login_pass,
              templateLoginScope(templateId),
            ),
          };
    await runTemplateCommand(
      this.runtime,
      templateId,
      { type: 'EditTemplate', requesterId: command.requesterId, changes },
      command.metadata,
    );
    return viewOf(this.runtime, this.logins, templateId, command.requesterId);
  }
}

export class DeleteTemplateCommand extends Command<{ templateId: number }> {
  constructor(
    readonly requesterId: number,
    readonly ref: { hashId?: string; templateId?: number },
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

@CommandHandler(DeleteTemplateCommand)
export class DeleteTemplateHandler implements ICommandHandler<DeleteTemplateCommand> {
  constructor(@Inject(MARKETPLACE_RUNTIME) private readonly runtime: ContextRuntime) {}
  async execute(command: DeleteTemplateCommand): Promise<{ templateId: number }> {
    const templateId = await resolveTemplateId(this.runtime, command.ref);
    await runTemplateCommand(
      this.runtime,
      templateId,
      { type: 'DeleteTemplate', requesterId: command.requesterId },
      command.metadata,
    );
    return { templateId };
  }
}

/** The spec's template search fields (select_filters). */
/** A search field read straight from a column of the templates table. */
const column = (kind: FieldSpec['kind'], name: string): FieldSpec => ({ kind, sql: () => `t.${name}` });

export const TEMPLATE_FIELDS: Readonly<Record<string, FieldSpec>> = {
  creator_id: column('number', 'creator_id'),
  created_at: column('number', 'created_at'),
  count_created: { kind: 'number', sql: () => COUNT_CREATED },
  default_tag: column('string', 'tag'),
  docker_login_repo: column('string', 'docker_login_repo'),
  id: column('number', 'template_id'),
  image: column('string', 'image'),
  jup_direct: column('bool', 'jup_direct'),
  hash_id: column('string', 'hash_id'),
  name: column('string', 'name'),
  recent_create_date: { kind: 'number', sql: () => RECENT_CREATE_DATE },
  recommended_disk_space: column('number', 'recommended_disk_space'),
  recommended: column('bool', 'recommended'),
  ssh_direct: column('bool', 'ssh_direct'),
  tag: column('string', 'tag'),
  use_ssh: column('bool', 'use_ssh'),
};

export function parseTemplateFilters(raw: unknown): Filter[] {
  if (raw === undefined || raw === null || raw === '') return [];
  let value = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch {
      throw ApiError.badRequest('select_filters must be a JSON object');
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw ApiError.badRequest('select_filters must be a JSON object');
  return Object.entries(value as Record<string, unknown>).flatMap(([field, ops]) => {
    if (!TEMPLATE_FIELDS[field]) throw ApiError.badRequest(`Unknown filter field: ${field}`, { field });
    return parseFilter(field, ops, TEMPLATE_FIELDS);
  });
}

export const TEMPLATE_SEARCH_LIMIT = 1000;

export class SearchTemplatesQuery extends Query<TemplateView[]> {
  constructor(
    readonly viewerId: number,
    readonly filters: Filter[],
  ) {
    super();
  }
}

@QueryHandler(SearchTemplatesQuery)
export class SearchTemplatesHandler
  extends WithRegistryLogins
  implements IQueryHandler<SearchTemplatesQuery>
{
  async execute(query: SearchTemplatesQuery): Promise<TemplateView[]> {
    const params: unknown[] = [query.viewerId];
    const param = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    const terms = [
      '(NOT t.private OR t.creator_id = $1)',
      ...filterSql(query.filters, TEMPLATE_FIELDS, { price: '', storage: '', now: '' }, param),
    ];
    const rows = await this.runtime.db.query<TemplateRow>(
      `SELECT ${VIEW_COLUMNS} FROM ${VIEW_FROM} WHERE ${terms.join(' AND ')} ORDER BY t.template_id LIMIT ${TEMPLATE_SEARCH_LIMIT}`,
      params,
    );
    return rows.map((row) => toView(row, query.viewerId, this.logins));
  }
}
