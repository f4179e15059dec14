import { type DynamicModule, Module } from '@nestjs/common';
import { AUTH_STRATEGIES, contextModule } from '@rigmarket/http-kit';
import { AdminSeeder } from './admin-seed';
import { ApiKeyHistoryController } from './api-keys/api-key-history.http.controller';
import { ApiKeysController } from './api-keys/api-keys.http.controller';
import { AuditLogController } from './audit-log/audit-log.http.controller';
import { IpAddressesController } from './audit-log/ip-addresses.http.controller';
import {
  CreateApiKeyHandler,
  DeleteApiKeyHandler,
  GetApiKeyHandler,
  ListApiKeysHandler,
  ResetApiKeyHandler,
} from './api-keys/api-keys.handlers';
import { identityContext } from './identity.context';
import { IDENTITY_OPTIONS, IDENTITY_RUNTIME, type IdentityOptions } from './identity.tokens';
import { LogMailer, MAILER, type Mailer, SmtpMailer } from './mailer';
import { LogSmsSender, SMS_SENDER, type SmsSender, type TwilioConfig, TwilioSmsSender } from './tfa/sms';
import { SecretBox } from './tfa/tfa.crypto';
import { TFA_SECRET_BOX } from './tfa/tfa.io';
import { TfaMethodsService } from './tfa/tfa-methods.service';
import { TfaService } from './tfa/tfa.service';
import { SshKeysController } from './ssh-keys/ssh-keys.http.controller';
import { AddSshKeyHandler, DeleteSshKeyHandler, ReplaceSshKeyHandler } from './ssh-keys/ssh-keys.handlers';
import { TfaAdminController } from './tfa/tfa-admin.http.controller';
import { TfaHistoryController } from './tfa/tfa-history.http.controller';
import { TfaSecretStrategy } from './tfa/tfa-secret.strategy';
import { TfaController } from './tfa/tfa.http.controller';
import { TeamRolesController } from './team-roles/team-roles.http.controller';
import {
  CreateTeamRoleHandler,
  DeleteTeamRoleHandler,
  GetTeamRoleHandler,
  ListTeamRolesHandler,
  UpdateTeamRoleHandler,
} from './team-roles/team-roles.handlers';
import {
  LOGIN_THROTTLE,
  type LoginLockout,
  LoginThrottle,
  loginLockoutFromEnv,
} from './users/login-throttle';
import { SubaccountsController, UsersController } from './users/users.http.controller';
import { TeamsController } from './teams/teams.http.controller';
import {
  CreateTeamHandler,
  DestroyTeamHandler,
  InviteMemberHandler,
  JoinTeamHandler,
  ListMembersHandler,
  RemoveMemberHandler,
} from './teams/teams.handlers';
import { WebhookDispatcher } from './webhooks/webhook-dispatcher';
import { WebhookInterest } from './webhooks/webhook-interest';
import { WEBHOOK_SETTINGS, type WebhookSettings, webhookSettingsFromEnv } from './webhooks/webhook-settings';
import { WebhooksController } from './webhooks/webhooks.http.controller';
import { WebhooksReactor } from './webhooks/webhooks.reactor';
import { WebhooksService } from './webhooks/webhooks.service';
import {
  GetUserHandler,
  LoginHandler,
  LogoutHandler,
  ChangePasswordHandler,
  RegisterUserHandler,
  VerifyEmailHandler,
  UpdateUserHandler,
  ListSubaccountsHandler,
} from './users/users.handlers';

const userHandlers = [
  RegisterUserHandler,
  VerifyEmailHandler,
  LoginHandler,
  LogoutHandler,
  ChangePasswordHandler,
  GetUserHandler,
  UpdateUserHandler,
  ListSubaccountsHandler,
];
const teamHandlers = [
  CreateTeamHandler,
  DestroyTeamHandler,
  InviteMemberHandler,
  JoinTeamHandler,
  ListMembersHandler,
  RemoveMemberHandler,
];
const apiKeyHandlers = [
  CreateApiKeyHandler,
  DeleteApiKeyHandler,
  ResetApiKeyHandler,
  ListApiKeysHandler,
  GetApiKeyHandler,
];
const teamRoleHandlers = [
  CreateTeamRoleHandler,
  UpdateTeamRoleHandler,
  DeleteTeamRoleHandler,
  GetTeamRoleHandler,
  ListTeamRolesHandler,
];

export interface IdentityModuleOptions extends IdentityOptions {
  /** Wins over smtpUrl / SMTP_URL. */
  mailer?: Mailer;
  /** SMTP_URL: smtp://[user:pass@]host:port; mail goes to the log when neither this nor SMTP_URL is set. */
  smtpUrl?: string;
  /** SMTP_FROM. */
  smtpFrom?: string;
  /** Wins over twilio / TWILIO_*. */
  sms?: SmsSender;
  /** Twilio credentials; TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN, TWILIO_FROM (and TWILIO_BASE_URL) otherwise. */
  twilio?: TwilioConfig;
  /** RIGMARKET_TFA_KEY: 32 bytes, hex or base64, encrypting TOTP secrets at rest. */
  tfaKey?: string;
  /** Password login lockout (RIGMARKET_LOGIN_MAX_FAILURES, RIGMARKET_LOGIN_LOCKOUT_S otherwise). */
  loginLockout?: LoginLockout;
  /** Webhook delivery settings; each one not given comes from RIGMARKET_WEBHOOK_* (webhook-settings.ts). */
  webhooks?: Partial<WebhookSettings>;
}

export function chooseMailer(options: IdentityModuleOptions): Mailer {
  if (options.mailer) return options.mailer;
  if (options.smtpUrl) return new SmtpMailer(options.smtpUrl, options.smtpFrom ?? process.env.SMTP_FROM);
  return SmtpMailer.fromEnv() ?? new LogMailer();
}

export function chooseSms(options: IdentityModuleOptions): SmsSender {
  if (options.sms) return options.sms;
  if (options.twilio) return new TwilioSmsSender(options.twilio);
  return TwilioSmsSender.fromEnv() ?? new LogSmsSender();
}

@Module({})
export class IdentityModule {
  static forRoot(options: IdentityModuleOptions = {}): DynamicModule {
    return contextModule({
      module: IdentityModule,
      definition: identityContext,
      runtimeToken: IDENTITY_RUNTIME,
      appName: 'identity-2fa',
      controllers: [
        UsersController,
        SubaccountsController,
        TeamsController,
        AuditLogController,
        IpAddressesController,
        ApiKeysController,
        ApiKeyHistoryController,
        TfaHistoryController,
        TeamRolesController,
        TfaController,
        TfaAdminController,
        SshKeysController,
        WebhooksController,
      ],
      providers: [
        { provide: IDENTITY_OPTIONS, useValue: options },
        { provide: MAILER, useFactory: () => chooseMailer(options) },
        {
          provide: LOGIN_THROTTLE,
          useFactory: () => new LoginThrottle(options.loginLockout ?? loginLockoutFromEnv()),
        },
        { provide: SMS_SENDER, useFactory: () => chooseSms(options) },
        {
          provide: TFA_SECRET_BOX,
          useFactory: () => SecretBox.fromConfig(options.tfaKey ?? process.env.RIGMARKET_TFA_KEY),
        },
        TfaService,
        TfaMethodsService,
        {
          provide: AUTH_STRATEGIES,
          inject: [TfaService],
          useFactory: (tfa: TfaService) => [new TfaSecretStrategy(tfa)],
        },
        {
          provide: WEBHOOK_SETTINGS,
          useFactory: (): WebhookSettings => ({ ...webhookSettingsFromEnv(), ...options.webhooks }),
        },
        WebhookDispatcher,
        WebhookInterest,
        WebhooksService,
        WebhooksReactor,
        AdminSeeder,
        ...userHandlers,
        ...teamHandlers,
        ...apiKeyHandlers,
        ...teamRoleHandlers,
        AddSshKeyHandler,
        ReplaceSshKeyHandler,
        DeleteSshKeyHandler,
      ],
    });
  }
}
