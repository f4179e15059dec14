import { type DynamicModule, Module } from '@nestjs/common';
import { contextModule } from '@rigmarket/http-kit';
import { AdminSeeder } from './admin-seed';
import { ApiKeysController } from './api-keys/api-keys.http.controller';
import {
  CreateApiKeyHandler,
  DeleteApiKeyHandler,
  GetApiKeyHandler,
  ListApiKeysHandler,
  ResetApiKeyHandler,
} from './api-keys/api-keys.handlers';
import { identityContext } from './identity.context';
import { IDENTITY_OPTIONS, IDENTITY_RUNTIME, type IdentityOptions } from './identity.tokens';
import { LogMailer, MAILER, type Mailer } from './mailer';
import { TeamRolesController } from './team-roles/team-roles.http.controller';
import {
  CreateTeamRoleHandler,
  DeleteTeamRoleHandler,
  GetTeamRoleHandler,
  ListTeamRolesHandler,
  UpdateTeamRoleHandler,
} from './team-roles/team-roles.handlers';
import { UsersController } from './users/users.http.controller';
import { GetUserHandler, LoginHandler, RegisterUserHandler, VerifyEmailHandler } from './users/users.handlers';

const userHandlers = [RegisterUserHandler, VerifyEmailHandler, LoginHandler, GetUserHandler];
const apiKeyHandlers = [CreateApiKeyHandler, DeleteApiKeyHandler, ResetApiKeyHandler, ListApiKeysHandler, GetApiKeyHandler];
const teamRoleHandlers = [CreateTeamRoleHandler, UpdateTeamRoleHandler, DeleteTeamRoleHandler, GetTeamRoleHandler, ListTeamRolesHandler];

export interface IdentityModuleOptions extends IdentityOptions {
  mailer?: Mailer;
}

@Module({})
export class IdentityModule {
  static forRoot(options: IdentityModuleOptions = {}): DynamicModule {
    return contextModule({
      module: IdentityModule,
      definition: identityContext,
      runtimeToken: IDENTITY_RUNTIME,
      appName: 'identity-2fa',
      controllers: [UsersController, ApiKeysController, TeamRolesController],
      providers: [
        { provide: IDENTITY_OPTIONS, useValue: options },
        { provide: MAILER, useValue: options.mailer ?? new LogMailer() },
        AdminSeeder,
        ...userHandlers,
        ...apiKeyHandlers,
        ...teamRoleHandlers,
      ],
    });
  }
}
