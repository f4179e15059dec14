import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import type { EventMetadata } from '@rigmarket/contracts';
import type { ContextRuntime } from '@rigmarket/event-sourcing';
import { hashKey } from '@rigmarket/http-kit';
import { apiKeyDecider, apiKeyStreamId } from './api-keys/api-key.decider';
import { IDENTITY_OPTIONS, IDENTITY_RUNTIME, type IdentityOptions } from './identity.tokens';
import { BUILT_IN_ROLES, teamRoleDecider, teamRoleStreamId } from './team-roles/team-role.decider';
import { userDecider, userStreamId } from './users/user.decider';
import { newKeyValue } from './secrets';

const ADMIN_USER_ID = 1;
const ADMIN_KEY_ID = 1;

/**
 * On an empty store: the built-in team roles, and an admin (user 1, e-mail verified) with a full-access
 * key (key 1): RIGMARKET_ADMIN_KEY's value, or a generated one printed once. Fixed stream ids make
 * seeding idempotent even when several processes start at once.
 */
@Injectable()
export class AdminSeeder implements OnApplicationBootstrap {
  private readonly logger = new Logger('identity');

  constructor(
    @Inject(IDENTITY_RUNTIME) private readonly runtime: ContextRuntime,
    @Inject(IDENTITY_OPTIONS) private readonly options: IdentityOptions,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const metadata: EventMetadata = { correlationId: 'seed', causationId: 'seed', actor: {} };
    for (const role of BUILT_IN_ROLES) {
      await this.runtime.runner.handle(
        teamRoleStreamId(role.roleId),
        teamRoleDecider,
        (state) =>
          teamRoleDecider.decide({ type: 'CreateTeamRole', ...role, builtIn: true, ownerId: null }, state),
        metadata,
      );
    }
    const { version } = await this.runtime.runner.load(userStreamId(ADMIN_USER_ID), userDecider);
    if (version > 0) return;
    const key = this.options.adminKey || newKeyValue();
    const seeded = await this.runtime.runner.handle(
      userStreamId(ADMIN_USER_ID),
      userDecider,
      (state, now) =>
        state.status !== 'none'
          ? []
          : userDecider.decide(
              {
                type: 'RegisterUser',
                userId: ADMIN_USER_ID,
                email: this.options.adminEmail || 'admin@localhost',
                username: 'admin',
                fullName: 'Administrator',
                passwordHash: null,
                isAdmin: true,
                preVerified: true,
                verification: null,
                at: now.toISOString(),
              },
              state,
            ),
      metadata,
    );
    if (seeded.events.length === 0) return;
    await this.runtime.runner.handle(
      apiKeyStreamId(ADMIN_KEY_ID),
      apiKeyDecider,
      (state, now) =>
        state.status !== 'none'
          ? []
          : apiKeyDecider.decide(
              {
                type: 'CreateApiKey',
                keyId: ADMIN_KEY_ID,
                userId: ADMIN_USER_ID,
                name: 'admin',
                keyHash: hashKey(key),
                permissions: null,
                kind: 'api',
                at: now.toISOString(),
              },
              state,
            ),
      metadata,
    );
    if (!this.options.adminKey) {
      // Printed once, to stdout only: it is stored nowhere but as a hash.
      process.stdout.write(`\nRigmarket admin API key (shown once, keep it safe): ${key}\n\n`);
    }
    this.logger.log(`Seeded admin user ${this.options.adminEmail || 'admin@localhost'}`);
  }
}
