export { IdentityModule, type IdentityModuleOptions } from './identity.module';
export { identityContext } from './identity.context';
export { IDENTITY_RUNTIME } from './identity.tokens';
export { RecordingMailer, LogMailer, type Mailer } from './mailer';
