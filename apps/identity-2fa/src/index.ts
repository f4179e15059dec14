export { IdentityModule, type IdentityModuleOptions } from './identity.module';
export { identityContext } from './identity.context';
export { IDENTITY_RUNTIME } from './identity.tokens';
export { RecordingMailer, LogMailer, SmtpMailer, type Mailer } from './mailer';
export { LogSmsSender, TwilioSmsSender, type SmsSender } from './tfa/sms';
export { TfaService } from './tfa/tfa.service';
export { totpCode } from './tfa/tfa.crypto';
