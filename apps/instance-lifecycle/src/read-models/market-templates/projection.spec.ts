import type { TemplateContent } from '@rigmarket/contracts';
import { projectionSpec } from '@rigmarket/testing';
import { instanceLifecycleContext } from '../../instance-lifecycle.context';
import { marketTemplatesProjection } from './projection';

const content = (image: string) => ({ name: 't', image }) as TemplateContent;

describe('market_templates projection', () => {
  const spec = projectionSpec(instanceLifecycleContext, marketTemplatesProjection);
  afterAll(() => spec.close());

  it('finds templates by their current hash id and marks deleted ones', () =>
    spec
      .given([
        {
          streamId: 'template-1',
          type: 'TemplateCreated',
          data: { templateId: 1, hashId: 'h1', creatorId: 2, content: content('busybox'), createdAt: 'x' },
        },
        {
          streamId: 'template-2',
          type: 'TemplateCreated',
          data: { templateId: 2, hashId: 'h2', creatorId: 2, content: content('alpine'), createdAt: 'x' },
        },
        {
          streamId: 'template-2',
          type: 'TemplateDeleted',
          data: { templateId: 2, hashId: 'h2', deletedAt: 'x' },
        },
      ])
      .when({
        streamId: 'template-1',
        type: 'TemplateEdited',
        data: { templateId: 1, hashId: 'h3', content: content('ubuntu'), editedAt: 'x' },
      })
      .then(
        `SELECT template_id, hash_id, creator_id, content, deleted FROM instance_lifecycle.market_templates ORDER BY 1`,
        [
          {
            template_id: 1,
            hash_id: 'h3',
            creator_id: 2,
            content: { name: 't', image: 'ubuntu' },
            deleted: false,
          },
          {
            template_id: 2,
            hash_id: 'h2',
            creator_id: 2,
            content: { name: 't', image: 'alpine' },
            deleted: true,
          },
        ],
      ));
});
