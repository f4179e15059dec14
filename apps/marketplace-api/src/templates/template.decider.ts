import { createHash } from 'node:crypto';
import { DomainError, type TemplateContent, type TemplateEvent } from '@rigmarket/contracts';

export type TemplateState =
  | { status: 'none' }
  | {
      status: 'active' | 'deleted';
      templateId: number;
      creatorId: number;
      hashId: string;
      content: TemplateContent;
      revision: number;
    };

export type TemplateCommand = { at: string } & (
  | { type: 'CreateTemplate'; templateId: number; creatorId: number; content: TemplateContent }
  /** Only the fields present change (a null from the CLI's full-object edit was dropped before). */
  | { type: 'EditTemplate'; requesterId: number; changes: Partial<TemplateContent> }
  | { type: 'DeleteTemplate'; requesterId: number }
);

export const TemplateErrors = {
  notFound: 'no_such_template',
  exists: 'template_exists',
} as const;

/**
 * hash_id: derived from the content, the template's id and its revision, so every edit yields a new
 * one (even an edit that changes nothing) and two accounts' identical templates never share one.
 */
export function templateHash(templateId: number, revision: number, content: TemplateContent): string {
  const canonical = JSON.stringify(
    Object.keys(content)
      .sort()
      .map((k) => [k, content[k as keyof TemplateContent]]),
  );
  return createHash('sha256').update(`${templateId}:${revision}:${canonical}`).digest('hex').slice(0, 32);
}

export const initialState = (): TemplateState => ({ status: 'none' });

export function evolve(state: TemplateState, event: TemplateEvent): TemplateState {
  switch (event.type) {
    case 'TemplateCreated':
      return {
        status: 'active',
        templateId: event.data.templateId,
        creatorId: event.data.creatorId,
        hashId: event.data.hashId,
        content: event.data.content,
        revision: 0,
      };
    case 'TemplateEdited':
      return state.status === 'none'
        ? state
        : { ...state, hashId: event.data.hashId, content: event.data.content, revision: state.revision + 1 };
    case 'TemplateDeleted':
      return state.status === 'none' ? state : { ...state, status: 'deleted' };
  }
}

function ownedTemplate(state: TemplateState, requesterId: number) {
  // Someone else's template is reported as missing, like a deleted one.
  if (state.status !== 'active' || state.creatorId !== requesterId)
    throw new DomainError(TemplateErrors.notFound, 'No such template');
  return state;
}

export function decide(command: TemplateCommand, state: TemplateState): TemplateEvent[] {
  switch (command.type) {
    case 'CreateTemplate': {
      if (state.status !== 'none') throw new DomainError(TemplateErrors.exists, 'This template id is taken');
      return [
        {
          type: 'TemplateCreated',
          data: {
            templateId: command.templateId,
            hashId: templateHash(command.templateId, 0, command.content),
            creatorId: command.creatorId,
            content: command.content,
            createdAt: command.at,
          },
        },
      ];
    }
    case 'EditTemplate': {
      const template = ownedTemplate(state, command.requesterId);
      // extra_filters merge by key (the CLI always sends its 3 default filters; the others must survive);
      // a key given as null is removed (docs/marketplace.md).
      const extraFilters = command.changes.extra_filters
        ? Object.fromEntries(
            Object.entries({ ...template.content.extra_filters, ...command.changes.extra_filters }).filter(
              ([, value]) => value !== null,
            ),
          )
        : template.content.extra_filters;
      const content: TemplateContent = {
        ...template.content,
        ...command.changes,
        extra_filters: extraFilters,
      };
      return [
        {
          type: 'TemplateEdited',
          data: {
            templateId: template.templateId,
            hashId: templateHash(template.templateId, template.revision + 1, content),
            content,
            editedAt: command.at,
          },
        },
      ];
    }
    case 'DeleteTemplate': {
      const template = ownedTemplate(state, command.requesterId);
      return [
        {
          type: 'TemplateDeleted',
          data: { templateId: template.templateId, hashId: template.hashId, deletedAt: command.at },
        },
      ];
    }
  }
}

export const templateDecider = { initialState, evolve, decide };
export const templateStreamId = (templateId: number): string => `template-${templateId}`;
