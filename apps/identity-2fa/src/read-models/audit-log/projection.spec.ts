import { projectionSpec } from '@rigmarket/testing';
import { identityContext } from '../../identity.context';
import { auditLogProjection } from './projection';

const AT = '2026-05-01T12:00:00.000Z';
const byRenter = (route: string, correlationId: string) => ({
  actor: { userId: 7, apiKeyId: 31 },
  origin: { ip: '198.51.100.4', route },
  correlationId,
});

describe('audit_log projection (the accounts’ important actions, from every context)', () => {
  const spec = projectionSpec(identityContext, auditLogProjection);
  afterAll(() => spec.close());

  it('records who, from where, what and when for actions, without secrets; skips what nobody did', () =>
    spec
      .given([
        {
          streamId: 'user-7',
          type: 'UserLoggedIn',
          data: { userId: 7, sessionKeyId: 30, at: AT },
          metadata: {
            origin: { ip: '198.51.100.4', route: 'POST /api/v0/users/login/' },
            correlationId: 'r1',
          },
        },
        {
          streamId: 'api_key-31',
          type: 'ApiKeyCreated',
          data: {
            keyId: 31,
            userId: 7,
            name: 'ci',
            keyHash: 'f00d',
            permissions: null,
            kind: 'api',
            createdAt: AT,
          },
          metadata: byRenter('POST /api/v0/auth/apikeys/', 'r2'),
        },
        // A heartbeat is a machine's doing, not an action; a charge has nobody behind it.
        {
          streamId: 'machine-5',
          type: 'MachineHeartbeat',
          data: { machineId: 5, at: AT, reliability: 1 },
          metadata: byRenter('POST /api/v0/machines/5/heartbeat/', 'r3'),
        },
      ])
      .when({
        streamId: 'template-3',
        type: 'TemplateCreated',
        data: {
          templateId: 3,
          hashId: 'abc',
          creatorId: 7,
          content: { name: 'train', env: '-e TOKEN=x' },
          createdAt: AT,
        },
        metadata: byRenter('POST /api/v0/template/', 'r4'),
      })
      .then(
        `SELECT user_id, api_key_id, ip_address, api_route, event_type, object, args, correlation_id
           FROM identity.audit_log ORDER BY global_position`,
        [
          {
            user_id: 7,
            api_key_id: null,
            ip_address: '198.51.100.4',
            api_route: 'POST /api/v0/users/login/',
            event_type: 'UserLoggedIn',
            object: 'user-7',
            args: { userId: 7, sessionKeyId: 30, at: AT },
            correlation_id: 'r1',
          },
          {
            user_id: 7,
            api_key_id: 31,
            ip_address: '198.51.100.4',
            api_route: 'POST /api/v0/auth/apikeys/',
            event_type: 'ApiKeyCreated',
            object: 'api_key-31',
            args: { keyId: 31, userId: 7, name: 'ci', permissions: null, kind: 'api', createdAt: AT },
            correlation_id: 'r2',
          },
          {
            user_id: 7,
            api_key_id: 31,
            ip_address: '198.51.100.4',
            api_route: 'POST /api/v0/template/',
            event_type: 'TemplateCreated',
            object: 'template-3',
            args: { templateId: 3, hashId: 'abc', creatorId: 7, createdAt: AT },
            correlation_id: 'r4',
          },
        ],
      ));
});
