import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { Database } from '@rigmarket/event-sourcing';
import { RecordingMailer } from '@rigmarket/identity-2fa';
import { InProcessTransport } from '@rigmarket/messaging';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { seedDemoHosts } from '../demo-hosts';
import { createEmbeddedApp } from '../platform';

const ROOT = join(__dirname, '..', '..', '..', '..');
/** Where the journeys' screenshots go; CI keeps .infra/artifacts (README, docs/console.md). */
export const CONSOLE_ARTIFACTS = join(ROOT, '.infra', 'artifacts', 'console');
/** Debian's Chromium (scripts/chromium.sh installs it); CHROMIUM_PATH to use another one. */
const CHROMIUM =
  process.env.CHROMIUM_PATH ?? execFileSync('sh', ['-c', 'command -v chromium']).toString().trim();

export const PASSWORD = 'correct horse battery';

/**
 * The embedded platform (with the built console from apps/console/dist), the demo hosts listed, mail
 * recorded, and headless Chromium: what the console's browser journeys run against.
 */
export interface ConsoleRig {
  base: string;
  adminKey: string;
  mailer: RecordingMailer;
  browser: Browser;
  /** A fresh browser context (desktop size unless given), failing the test on any page error. */
  context(viewport?: { width: number; height: number }): Promise<BrowserContext>;
  /** A JSON call to the API. */
  call<T = Record<string, unknown>>(
    method: string,
    path: string,
    key: string | null,
    body?: unknown,
  ): Promise<T>;
  shot(page: Page, name: string): Promise<void>;
  close(): Promise<void>;
}

export async function startConsoleRig(
  adminKey: string,
  options: { billingIntervalMs?: number } = {},
): Promise<ConsoleRig> {
  const db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
  const mailer = new RecordingMailer();
  const app: INestApplication = await createEmbeddedApp({
    db,
    transport: new InProcessTransport(),
    identity: { adminKey, mailer },
    marketplace: { billingIntervalMs: options.billingIntervalMs },
  });
  await app.listen(0, '127.0.0.1');
  const base = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
  await seedDemoHosts(base, adminKey);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  mkdirSync(CONSOLE_ARTIFACTS, { recursive: true });
  const errors: string[] = [];
  return {
    base,
    adminKey,
    mailer,
    browser,
    async context(viewport = { width: 1280, height: 800 }) {
      const context = await browser.newContext({ viewport, baseURL: base });
      context.on('page', (page) => page.on('pageerror', (e) => errors.push(e.message)));
      return context;
    },
    async call<T>(method: string, path: string, key: string | null, body?: unknown): Promise<T> {
      const answer = await fetch(`${base}${path}`, {
        method,
        headers: {
          ...(key ? { Authorization: `Bearer ${key}` } : {}),
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await answer.text();
      if (!answer.ok) throw new Error(`${method} ${path}: ${answer.status} ${text}`);
      return JSON.parse(text) as T;
    },
    async shot(page, name) {
      await page.screenshot({ path: join(CONSOLE_ARTIFACTS, `${name}.png`), fullPage: true });
    },
    async close() {
      await browser.close();
      await app.close();
      await db.close();
      if (errors.length > 0) throw new Error(`errors in the page: ${errors.join('; ')}`);
    },
  };
}

/** The code in the newest mail to `email` ("... code is XXXX"). */
export function mailedCode(mailer: RecordingMailer, email: string): string {
  const mail = [...mailer.sent].reverse().find((m) => m.to === email);
  const code = /code is (\w+)/.exec(mail?.text ?? '')?.[1];
  if (!code) throw new Error(`no code mailed to ${email}`);
  return code;
}
