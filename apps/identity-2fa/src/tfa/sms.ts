import { Logger } from '@nestjs/common';
import { ApiError } from '@rigmarket/contracts';
import type twilio from 'twilio';
import { logsMessageTexts } from '../mailer';

/** Outgoing SMS. */
export interface SmsSender {
  send(to: string, body: string): Promise<void>;
}

export const SMS_SENDER = Symbol('SMS_SENDER');

export interface TwilioConfig {
  accountSid: string;
  authToken: string;
  from: string;
  /** Overrides https://api.twilio.com (tests point it at a local stand-in). */
  baseUrl?: string;
}

/**
 * The Twilio SDK, loaded when the first TwilioSmsSender is made: without TWILIO_* nothing needs it, and
 * loading it costs about 20 MB and a good part of a second at every start (docs/benchmarks.md).
 */
function twilioSdk(): typeof twilio {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use, see above
  return require('twilio') as typeof twilio;
}

/** An HTTP client of the Twilio SDK that rewrites every request onto another base URL, keeping path and query. */
function rebasedRequestClient(sdk: typeof twilio, base: URL): twilio.RequestClient {
  class RebasedRequestClient extends sdk.RequestClient {
    override request<TData>(opts: Parameters<twilio.RequestClient['request']>[0]) {
      const target = new URL(opts.uri);
      target.protocol = base.protocol;
      target.host = base.host;
      opts.uri = target.toString();
      return super.request<TData>(opts as Parameters<twilio.RequestClient['request']>[0] & { data?: TData });
    }
  }
  return new RebasedRequestClient();
}

/** SMS through the real Twilio SDK (Messages API). */
export class TwilioSmsSender implements SmsSender {
  private readonly client: twilio.Twilio;

  constructor(private readonly config: TwilioConfig) {
    const sdk = twilioSdk();
    this.client = sdk(
      config.accountSid,
      config.authToken,
      config.baseUrl ? { httpClient: rebasedRequestClient(sdk, new URL(config.baseUrl)) } : {},
    );
  }

  async send(to: string, body: string): Promise<void> {
    try {
      await this.client.messages.create({ to, from: this.config.from, body });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new ApiError(400, 'twilio_error', `SMS delivery failed: ${message}`);
    }
  }

  static fromEnv(env: NodeJS.ProcessEnv = process.env): TwilioSmsSender | null {
    const { TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN, TWILIO_FROM, TWILIO_BASE_URL } = env;
    if (!TWILIO_ACCOUNT_SID || !TWILIO_AUTH_TOKEN || !TWILIO_FROM) return null;
    return new TwilioSmsSender({
      accountSid: TWILIO_ACCOUNT_SID,
      authToken: TWILIO_AUTH_TOKEN,
      from: TWILIO_FROM,
      baseUrl: TWILIO_BASE_URL || undefined,
    });
  }
}

/**
 * Development SMS (no TWILIO_*): kept in memory; the body (a code) is logged only with
 * RIGMARKET_LOG_MESSAGES=1, as the development mailer does.
 */
export class LogSmsSender implements SmsSender {
  private readonly logger = new Logger('sms');
  readonly sent: { to: string; body: string }[] = [];
  constructor(private readonly logTexts: boolean = logsMessageTexts()) {}

  async send(to: string, body: string): Promise<void> {
    this.sent.push({ to, body });
    if (this.logTexts) this.logger.log({ to, body }, 'sms (development provider, not delivered)');
    else this.logger.warn({ to }, 'sms not delivered: no TWILIO_* (RIGMARKET_LOG_MESSAGES=1 logs the text)');
  }
}
