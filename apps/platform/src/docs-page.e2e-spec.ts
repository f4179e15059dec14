import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { Database } from '@rigmarket/event-sourcing';
import { InProcessTransport } from '@rigmarket/messaging';
import { type Browser, chromium } from 'playwright-core';
import { createEmbeddedApp } from './platform';

const ROOT = join(__dirname, '..', '..', '..');
/** Debian's Chromium (scripts/chromium.sh installs it); CHROMIUM_PATH to use another one. */
const CHROMIUM =
  process.env.CHROMIUM_PATH ?? execFileSync('sh', ['-c', 'command -v chromium']).toString().trim();

/**
 * The interactive API docs (docs/api.md) in a real browser: headless Chromium loads /docs from the embedded
 * platform, Swagger UI reads the app's OpenAPI document, and the offer search operation is shown. Every
 * asset comes from the app (no CDN). A screenshot is kept in .infra/artifacts/docs.png.
 */
describe('the interactive API docs in a browser', () => {
  let db: Database;
  let app: INestApplication;
  let browser: Browser;
  let base = '';

  beforeAll(async () => {
    db = await Database.connect({ kind: 'pglite', dataDir: 'memory://' });
    app = await createEmbeddedApp({
      db,
      transport: new InProcessTransport(),
      identity: { adminKey: 'docs' },
    });
    await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await db?.close();
  });

  it('shows the offer search operation from the served document, with every asset from the app', async () => {
    const page = await browser.newPage();
    const elsewhere: string[] = [];
    page.on('request', (req) => {
      if (!req.url().startsWith(base) && !req.url().startsWith('data:')) elsewhere.push(req.url());
    });
    // Every tag is listed, collapsed; a link to one (deep linking) opens it.
    const response = await page.goto(`${base}/docs#/Offers`);
    expect(response?.status()).toBe(200);
    await page.locator('.opblock-tag-section').nth(20).waitFor({ timeout: 20_000 });
    const search = page.locator('.opblock-summary-path[data-path="/api/v0/bundles"]').first();
    await search.waitFor({ timeout: 20_000 });
    expect(
      await page.locator('.opblock-post .opblock-summary-path[data-path="/api/v0/bundles"]').count(),
    ).toBe(1);
    expect(await page.locator('.info .title').first().innerText()).toContain('Rigmarket GPU rental API');
    mkdirSync(join(ROOT, '.infra', 'artifacts'), { recursive: true });
    await page.screenshot({ path: join(ROOT, '.infra', 'artifacts', 'docs.png'), fullPage: false });
    expect(elsewhere).toEqual([]);
  }, 60_000);
});
