import type { TemplateContent, TemplateEvent } from '@rigmarket/contracts';
import { deciderSpec } from '@rigmarket/testing';
import { TemplateErrors, templateDecider, templateHash } from './template.decider';
import { templateChanges, templateContentForCreate } from './template-content';

const AT = '2026-05-01T12:00:00.000Z';
const content: TemplateContent = templateContentForCreate({
  name: 't1',
  image: 'pytorch/pytorch',
  env: '-p 8080:8080',
  recommended_disk_space: '20',
});
const created: TemplateEvent = {
  type: 'TemplateCreated',
  data: { templateId: 5, hashId: templateHash(5, 0, content), creatorId: 2, content, createdAt: AT },
};
const spec = deciderSpec(templateDecider);

describe('template decider', () => {
  it('creates a template with a content-derived hash', () => {
    spec
      .given([])
      .when({ type: 'CreateTemplate', at: AT, templateId: 5, creatorId: 2, content })
      .then([created]);
    expect(created.data.hashId).toMatch(/^[0-9a-f]{32}$/);
  });

  it('edits only the given fields, with a new hash every time (even for the same content)', () => {
    const edited = { ...content, desc: 'd2' };
    spec
      .given([created])
      .when({ type: 'EditTemplate', at: AT, requesterId: 2, changes: { desc: 'd2' } })
      .then([
        {
          type: 'TemplateEdited',
          data: { templateId: 5, hashId: templateHash(5, 1, edited), content: edited, editedAt: AT },
        },
      ]);
    expect(templateHash(5, 1, content)).not.toBe(templateHash(5, 0, content));
  });

  it('lets only the creator edit or delete; others see no such template', () => {
    spec
      .given([created])
      .when({ type: 'EditTemplate', at: AT, requesterId: 3, changes: { desc: 'x' } })
      .thenThrows(TemplateErrors.notFound);
    spec
      .given([created])
      .when({ type: 'DeleteTemplate', at: AT, requesterId: 3 })
      .thenThrows(TemplateErrors.notFound);
    spec
      .given([created])
      .when({ type: 'DeleteTemplate', at: AT, requesterId: 2 })
      .then([
        { type: 'TemplateDeleted', data: { templateId: 5, hashId: created.data.hashId, deletedAt: AT } },
      ]);
  });

  it('treats a deleted template as missing', () => {
    const deleted: TemplateEvent = {
      type: 'TemplateDeleted',
      data: { templateId: 5, hashId: created.data.hashId, deletedAt: AT },
    };
    spec
      .given([created, deleted])
      .when({ type: 'DeleteTemplate', at: AT, requesterId: 2 })
      .thenThrows(TemplateErrors.notFound);
  });
});

describe('template request bodies', () => {
  it('takes absent docker_login_* as empty strings and a string disk size as a number', () => {
    expect(content).toMatchObject({
      docker_login_repo: '',
      docker_login_user: '',
      docker_login_pass: '',
      recommended_disk_space: 20,
      tag: 'latest',
      runtype: 'args',
    });
  });

  it('drops nulls on edit (the CLI sends the full object)', () => {
    expect(
      templateChanges({
        name: null,
        image: null,
        desc: 'd',
        ssh_direct: false,
        recommended_disk_space: null,
      }),
    ).toEqual({ desc: 'd', ssh_direct: false });
  });

  it('bounds recommended_disk_space at 100,000 GB (docs/api.md, Limits)', () => {
    expect(
      templateContentForCreate({ name: 'x', image: 'y', recommended_disk_space: 100_000 }),
    ).toMatchObject({
      recommended_disk_space: 100_000,
    });
    expect(() => templateContentForCreate({ name: 'x', image: 'y', recommended_disk_space: 1e308 })).toThrow(
      'recommended_disk_space must be at most 100,000 GB',
    );
    expect(() => templateChanges({ recommended_disk_space: '100001' })).toThrow('at most 100,000 GB');
  });

  it('requires name and image', () => {
    expect(() => templateContentForCreate({ image: 'x' })).toThrow('name is required');
    expect(() => templateContentForCreate({ name: 'x' })).toThrow('image is required');
  });
});

describe('template edits of extra_filters', () => {
  it("merge by key, so the CLI's default filters do not drop the template's own", () => {
    const withFilters = { ...content, extra_filters: { gpu_ram: { gte: 23000 }, verified: { eq: true } } };
    const base: TemplateEvent = {
      ...created,
      data: { ...created.data, content: withFilters },
    } as TemplateEvent;
    const events = templateDecider.decide(
      {
        type: 'EditTemplate',
        at: AT,
        requesterId: 2,
        changes: { extra_filters: { verified: { eq: false }, rentable: { eq: true } } },
      },
      templateDecider.evolve(templateDecider.initialState(), base),
    );
    expect((events[0]!.data as { content: TemplateContent }).content.extra_filters).toEqual({
      gpu_ram: { gte: 23000 },
      verified: { eq: false },
      rentable: { eq: true },
    });
  });

  it('take an empty extra_filters on edit as unchanged', () => {
    expect(templateChanges({ extra_filters: {}, desc: 'x' })).toEqual({ desc: 'x' });
  });
});
