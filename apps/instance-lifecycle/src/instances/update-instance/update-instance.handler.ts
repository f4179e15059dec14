import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { ApiError, type EventMetadata, type InstanceConfigChanges } from '@rigmarket/contracts';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { INSTANCE_RUNTIME } from '../../instance-lifecycle.tokens';
import {
  type TemplateRecord,
  findTemplate,
  findTemplateById,
} from '../../read-models/market-templates/queries';
import { envStringToObject, imageWithTag } from '../create-instance/template-merge';
import { runInstanceCommand } from '../instance-commands';
import type { UpdateRequest } from './update-request';

export class UpdateInstanceCommand extends Command<void> {
  constructor(
    readonly requesterId: number,
    readonly instanceId: number,
    readonly request: UpdateRequest,
    readonly metadata: EventMetadata,
  ) {
    super();
  }
}

/** A template's image, env, onstart and args as changes (its registry login does not carry over). */
function templateChanges({ hashId, content }: TemplateRecord): InstanceConfigChanges {
  return {
    image: imageWithTag(content.image, content.tag),
    env: envStringToObject(content.env),
    onstart: content.onstart ?? null,
    argsStr: content.args_str ?? null,
    templateHashId: hashId,
  };
}

/**
 * `vastai update instance` (docs/instances.md, "Update instance"): the named template's settings, then the
 * body's own over them, recorded as InstanceConfigUpdated; the host recreates the container (host command
 * `update`).
 */
@CommandHandler(UpdateInstanceCommand)
export class UpdateInstanceHandler implements ICommandHandler<UpdateInstanceCommand> {
  constructor(@Inject(INSTANCE_RUNTIME) private readonly runtime: ContextRuntime) {}

  async execute({ requesterId, instanceId, request, metadata }: UpdateInstanceCommand): Promise<void> {
    const { templateHashId, templateId } = request;
    let template: TemplateRecord | null = null;
    if (templateHashId !== null || templateId !== null) {
      template =
        templateHashId !== null
          ? await findTemplate(this.runtime.db, templateHashId)
          : await findTemplateById(this.runtime.db, templateId!);
      if (!template || (template.content.private && template.creatorId !== requesterId))
        throw ApiError.notFound(
          `No template ${templateHashId !== null ? `with hash_id ${templateHashId}` : templateId}`,
          'no_such_template',
        );
    }
    const changes = { ...(template ? templateChanges(template) : {}), ...request.changes };
    await runInstanceCommand(
      this.runtime,
      instanceId,
      { type: 'UpdateInstanceConfig', requesterId, changes, templateId: template?.templateId ?? null },
      metadata,
    );
  }
}
