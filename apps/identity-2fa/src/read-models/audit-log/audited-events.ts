import type { StreamSource } from '@rigmarket/event-sourcing';

/**
 * What the audit log records: the actions a person takes through the API, in every context. Left out on
 * purpose: what machines and timers do on their own (heartbeats, host state reports, billing charges and
 * earnings, copy progress), which would bury the actions under thousands of rows a day.
 */
export const AUDITED_EVENTS = {
  identity: {
    user: [
      'UserRegistered',
      'UserEmailVerified',
      'UserProfileUpdated',
      'UserSettingsChanged',
      'SubaccountRegistered',
      'UserPasswordSet',
      'UserLoggedIn',
    ],
    api_key: ['ApiKeyCreated', 'ApiKeyReset', 'ApiKeyDeleted'],
    team_role: ['TeamRoleCreated', 'TeamRoleUpdated', 'TeamRoleDeleted'],
    team: ['TeamCreated', 'TeamMemberInvited', 'TeamMemberJoined', 'TeamMemberRemoved', 'TeamDestroyed'],
    ssh_key: ['SshKeyAdded', 'SshKeyReplaced', 'SshKeyDeleted'],
    webhook: [
      'WebhookEndpointCreated',
      'WebhookEndpointUpdated',
      'WebhookSecretRotated',
      'WebhookEndpointDisabled',
      'WebhookEndpointEnabled',
      'WebhookEndpointDeleted',
    ],
    tfa: [
      'TfaMethodAdded',
      'TfaMethodUpdated',
      'TfaMethodRemoved',
      'TfaDisabled',
      'TfaBackupCodesIssued',
      'TfaBackupCodeUsed',
      'TfaLoginCompleted',
      'TfaVerificationFailed',
      'TfaLegacyMarked',
    ],
  },
  marketplace: {
    ledger: ['CreditGranted', 'CreditTransferred'],
    machine: [
      'MachineRegistered',
      'MachineListed',
      'MachineUnlisted',
      'MachineDeleted',
      'MinBidChanged',
      'MachineVerificationChanged',
      'VolumeSpaceListed',
      'VolumeSpaceUnlisted',
    ],
    volume: ['VolumeCreated', 'VolumeDeleted'],
    template: ['TemplateCreated', 'TemplateEdited', 'TemplateDeleted'],
  },
  instance: {
    instance: [
      'InstanceCreated',
      'InstanceIntentChanged',
      'InstanceLabelled',
      'InstanceRestarted',
      'InstanceConfigUpdated',
      'InstanceBidChanged',
      'InstanceDestroyed',
    ],
    hostagent: ['HostAgentEnrolled'],
  },
  sync: {
    maintenance: ['MaintenanceScheduled', 'MaintenanceCanceled'],
    sync: ['SyncRequested', 'SyncCanceled'],
  },
} as const;

export const AUDIT_SOURCES: StreamSource[] = Object.entries(AUDITED_EVENTS).flatMap(([context, streams]) =>
  Object.keys(streams).map((streamType) => ({ context: context as StreamSource['context'], streamType })),
);

export const AUDITED_TYPES: string[] = Object.values(AUDITED_EVENTS).flatMap((streams) =>
  Object.values(streams).flatMap((types: readonly string[]) => [...types]),
);
