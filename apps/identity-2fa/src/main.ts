import 'reflect-metadata';
import { runStandalone } from '@rigmarket/http-kit';
import { IdentityModule } from './identity.module';

/** Distributed mode: identity-2fa alone. */
void runStandalone('identity-2fa', 8081, [
  IdentityModule.forRoot({
    adminKey: process.env.RIGMARKET_ADMIN_KEY,
    adminEmail: process.env.RIGMARKET_ADMIN_EMAIL,
  }),
]);
