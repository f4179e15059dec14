import type { Migration } from '@rigmarket/event-sourcing';

/**
 * An instance's registry login, sealed like its key (PendingKeyBox), waiting in pending_provisions (for
 * its volume) and in its provision command until delivered: the host needs it, no event carries it.
 */
export const pendingProvisionLogin: Migration = {
  id: '0013-pending-provision-login',
  replaces: 'registry-0001-pending-provision-login',
  async up(sql, s) {
    await sql.execute(`ALTER TABLE ${s}.pending_provisions ADD COLUMN image_login_sealed TEXT`);
    await sql.execute(`ALTER TABLE ${s}.host_commands ADD COLUMN image_login_sealed TEXT`);
  },
};
