import type { TemplateContent } from '@rigmarket/contracts';
import { projectionSpec } from '@rigmarket/testing';
import { marketplaceContext } from '../../marketplace.context';
import { AT } from '../testing/events';
import { templatesProjection } from './projection';

const content = (name: string, image: string): TemplateContent =>
  ({
    name,
    image,
    tag: 'latest',
    docker_login_repo: '',
    jup_direct: false,
    ssh_direct: true,
    use_ssh: true,
    recommended_disk_space: 10,
    private: false,
  }) as TemplateContent;

describe('templates projection', () => {
  const spec = projectionSpec(marketplaceContext, templatesProjection);
  afterAll(() => spec.close());

  it('lists templates with their columns, follows edits (new hash) and drops deleted ones', () =>
    spec
      .given([
        {
          streamId: 'template-1',
          type: 'TemplateCreated',
          data: {
            templateId: 1,
            hashId: 'h1',
            creatorId: 2,
            content: content('torch', 'pytorch/pytorch'),
            createdAt: AT,
          },
        },
        {
          streamId: 'template-2',
          type: 'TemplateCreated',
          data: {
            templateId: 2,
            hashId: 'h2',
            creatorId: 2,
            content: content('tmp', 'busybox'),
            createdAt: AT,
          },
        },
        {
          streamId: 'template-2',
          type: 'TemplateDeleted',
          data: { templateId: 2, hashId: 'h2', deletedAt: AT },
        },
      ])
      .when({
        streamId: 'template-1',
        type: 'TemplateEdited',
        data: { templateId: 1, hashId: 'h3', content: content('torch2', 'pytorch/pytorch'), editedAt: AT },
      })
      .then(`SELECT template_id, hash_id, name, image, creator_id, created_at FROM marketplace.templates`, [
        {
          template_id: 1,
          hash_id: 'h3',
          name: 'torch2',
          image: 'pytorch/pytorch',
          creator_id: 2,
          created_at: Date.parse(AT) / 1000,
        },
      ]));
});
