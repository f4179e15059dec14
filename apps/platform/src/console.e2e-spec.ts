import { totpCode } from '@rigmarket/identity-2fa';
import { ed25519PublicKeyLine, eventually, uniqueName } from '@rigmarket/testing';
import type { Locator, Page } from 'playwright-core';
import { type ConsoleRig, mailedCode, PASSWORD, startConsoleRig } from './testing/console-browser';
import { grantCredit } from './testing/users';

/**
 * The web console in a real browser (docs/console.md): headless Chromium drives the console that the
 * embedded platform serves at `/` (one platform for both journeys, billing every second so that costs and
 * earnings show within the test).
 * - A renter with TOTP 2FA logs in with the password and a code, searches offers with filters and a sort,
 *   rents one with a port and an environment variable, watches it boot in the live list, follows its logs,
 *   stops, starts, labels and destroys it; then the console on a phone-sized screen.
 * - The demo hosts' owner logs in with an API key and, on the Host page, sees each machine with its listing,
 *   its offers and what it has earned from a renter's instance; reprices a machine and sees its offers
 *   follow, schedules and cancels maintenance, unlists and lists again.
 * Screenshots in .infra/artifacts/console/.
 */
const ADMIN_KEY = 'console-journeys-admin-key';

describe('the web console in a browser', () => {
  let rig: ConsoleRig;

  beforeAll(async () => {
    rig = await startConsoleRig(ADMIN_KEY, { billingIntervalMs: 1_000 });
  }, 120_000);
  afterAll(async () => {
    await rig?.close();
  });

  describe('a renter journey', () => {
    let email = '';
    let totpSecret = '';

    beforeAll(async () => {
      // A renter as a person makes one (sign-up and verification have their own console journey), with an
      // authenticator app as second factor and some credit.
      email = `${uniqueName('console')}@example.com`;
      await rig.call('POST', '/api/v0/users/', null, { email, password: PASSWORD });
      await rig.call('POST', '/api/v0/users/verify_email/', null, {
        email,
        code: mailedCode(rig.mailer, email),
      });
      const login = await rig.call<{ session_key: string }>('POST', '/api/v0/users/login/', null, {
        email,
        password: PASSWORD,
      });
      const key = login.session_key;
      const start = await rig.call<{ secret: string }>('POST', '/api/v0/tfa/authorize-new-method/', key, {
        tfa_method: 'sms',
      });
      await rig.call('PUT', '/api/v0/tfa/authorize-new-method/', key, {
        secret: start.secret,
        code: mailedCode(rig.mailer, email),
      });
      const setup = await rig.call<{ secret: string }>('POST', '/api/v0/tfa/totp-setup/', key, {});
      totpSecret = setup.secret;
      await rig.call('POST', '/api/v0/tfa/confirm-new/', key, {
        tfa_method: 'totp',
        secret: totpSecret,
        code: totpCode(totpSecret, new Date()),
      });
      await grantCredit(rig.base, ADMIN_KEY, key, 25);
    }, 120_000);

    const instanceCard = (page: Page): Locator => page.getByRole('article', { name: /^Instance \d+$/ });

    it('is served at / and on its client routes, never in place of the API, its docs or its health', async () => {
      for (const path of ['/', '/instances', '/offers?x=1']) {
        const page = await fetch(`${rig.base}${path}`, { headers: { Accept: 'text/html' } });
        expect(page.status).toBe(200);
        expect(page.headers.get('content-type')).toMatch(/^text\/html/);
        expect(page.headers.get('content-security-policy')).toMatch(/script-src 'self';/);
        const html = await page.text();
        expect(html).not.toMatch(/<script>|<script(?![^>]*\bsrc=)[^>]*>/);
        const bundle = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
        expect((await fetch(`${rig.base}${bundle}`)).headers.get('content-type')).toMatch(/javascript/);
      }
      const api = await fetch(`${rig.base}/api/v0/nope`, { headers: { Accept: 'text/html' } });
      expect(api.status).toBe(404);
      expect(await api.json()).toMatchObject({ success: false });
      expect((await fetch(`${rig.base}/healthz`)).headers.get('content-type')).toMatch(/json/);
      expect((await fetch(`${rig.base}/docs`)).headers.get('content-security-policy')).toBeNull();
      expect((await fetch(`${rig.base}/assets/missing.js`)).status).toBe(404);
    });

    it('logs in with password and TOTP, finds an offer, rents it, runs it, follows its logs, ends it', async () => {
      const context = await rig.context();
      const page = await context.newPage();

      // Served at / with a CSP that admits no inline script; an unknown client route still gets the app.
      const first = await page.goto('/');
      expect(first?.status()).toBe(200);
      expect(first?.headers()['content-security-policy']).toContain("script-src 'self'");
      await page.waitForURL('**/login');

      await page.getByRole('textbox', { name: 'Username or e-mail' }).fill(email);
      await page.getByRole('textbox', { name: 'Password', exact: true }).fill(PASSWORD);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByText('Two-factor authentication is on').waitFor();
      expect(await page.getByRole('radio', { name: 'Authenticator app' }).isChecked()).toBe(true);
      // The step after the one confirm-new used: a code is good once.
      await page
        .getByRole('textbox', { name: '6-digit code' })
        .fill(totpCode(totpSecret, new Date(Date.now() + 30_000)));
      await rig.shot(page, 'renter-01-second-factor');
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.waitForURL('**/offers');
      await page.getByLabel('Balance').getByText('$25.00').waitFor();

      // Every listed offer first, then filtered: at least 4 GPUs in the US or Germany, dearest first.
      await offerRows(page).first().waitFor();
      const all = await offerRows(page).count();
      await page.getByRole('textbox', { name: 'GPUs (at least)' }).fill('4');
      await page.getByRole('textbox', { name: 'Location (country codes)' }).fill('us, de');
      await page.getByRole('combobox', { name: 'Sort by' }).click();
      await page.getByRole('option', { name: 'Price per hour, highest first' }).click();
      await page.getByRole('button', { name: 'Search' }).click();
      await eventually(
        async () => ((await offerRows(page).count()) < all ? true : undefined),
        15_000,
        'filtered',
      );
      const rows = await offerRows(page).allInnerTexts();
      expect(rows.length).toBeGreaterThan(1);
      const prices = rows.map((r) => Number(/\$([\d.]+)\/h/.exec(r)?.[1]));
      expect(prices.every(Number.isFinite)).toBe(true);
      expect([...prices].sort((a, b) => b - a)).toEqual(prices);
      for (const row of rows) {
        expect(Number(/^(\d+)×/.exec(row)?.[1])).toBeGreaterThanOrEqual(4);
        expect(row).toMatch(/\b(US|DE)\b/);
      }
      await rig.shot(page, 'renter-02-offers');

      // Rent the cheapest of them with a port, a variable and a label.
      const cheapest = offerRows(page).last();
      const offerId = /#(\d+)/.exec(await cheapest.innerText())?.[1];
      await cheapest.getByRole('button', { name: `Rent offer ${offerId}` }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByRole('textbox', { name: 'Image' }).fill('busybox');
      await dialog.getByRole('textbox', { name: 'Label', exact: true }).fill('console-journey');
      await dialog.getByRole('textbox', { name: 'Ports' }).fill('8080');
      await dialog.getByRole('button', { name: 'Add a variable' }).click();
      await dialog.getByRole('textbox', { name: 'Variable 1 name' }).fill('GREETING');
      await dialog.getByRole('textbox', { name: 'Variable 1 value' }).fill('hello');
      await dialog.getByRole('textbox', { name: 'On-start script' }).fill('echo started by the console');
      await rig.shot(page, 'renter-03-rent');
      await dialog.getByRole('button', { name: /^Rent for \$/ }).click();
      await page.waitForURL('**/instances');

      // The live list: the instance boots with no reload.
      const card = instanceCard(page);
      await card.getByText('console-journey').waitFor();
      await card.getByText('running', { exact: true }).waitFor({ timeout: 30_000 });
      const instanceId = Number(/Instance (\d+)/.exec((await card.getAttribute('aria-label')) ?? '')?.[1]);
      const seen = await rig.call<{
        instances: { id: number; extra_env: [string, string][]; ports: object }[];
      }>('GET', '/api/v0/instances/', await sessionKeyOf(page));
      const rented = seen.instances.find((i) => i.id === instanceId);
      expect(rented?.extra_env).toContainEqual(['GREETING', 'hello']);
      expect(Object.keys(rented?.ports ?? {})).toContain('8080/tcp');
      // billed each second here: the ledger's charges for it, more than nothing
      await expectText(card.getByLabel('Cost so far'), /^\$(0\.0*[1-9]|[1-9])/);
      await rig.shot(page, 'renter-04-running');

      // Logs that follow: a reboot's new lines appear while the viewer is open.
      await card.getByRole('button', { name: 'Logs' }).click();
      const logs = page.getByRole('dialog', { name: `Logs of instance #${instanceId}` });
      const lines = logs.getByLabel('Log lines');
      await expectText(lines, /started by the console/);
      const readyBefore = ((await lines.innerText()).match(/container ready/g) ?? []).length;
      await rig.call('PUT', `/api/v0/instances/reboot/${instanceId}/`, await sessionKeyOf(page), {});
      await eventually(
        async () =>
          ((await lines.innerText()).match(/container ready/g) ?? []).length > readyBefore ? true : undefined,
        30_000,
        'the rebooted container in the followed logs',
      );
      await rig.shot(page, 'renter-05-logs');
      await page.keyboard.press('Escape');

      // Stop, start, label, destroy from the card.
      await card.getByText('running', { exact: true }).waitFor({ timeout: 30_000 });
      await card.getByRole('button', { name: 'Stop' }).click();
      await card.getByText('stopped', { exact: true }).waitFor({ timeout: 30_000 });
      await card.getByRole('button', { name: 'Start' }).click();
      await card.getByText('running', { exact: true }).waitFor({ timeout: 30_000 });
      await card.getByRole('button', { name: 'Label' }).click();
      await page.getByRole('dialog').getByRole('textbox', { name: 'Label' }).fill('renamed');
      await page.getByRole('button', { name: 'Save label' }).click();
      await card.getByText('renamed').waitFor();
      await card.getByRole('button', { name: 'Destroy' }).click();
      await page.getByRole('button', { name: `Destroy instance #${instanceId}` }).click();
      await card.waitFor({ state: 'detached', timeout: 30_000 });
      await page.getByText('No instances yet').waitFor();
      await context.close();
    }, 120_000);

    it('works on a phone-sized screen: navigation behind a menu button, nothing wider than the screen', async () => {
      const context = await rig.context({ width: 390, height: 844 });
      const page = await context.newPage();
      await page.goto('/offers');
      await page.waitForURL('**/login');
      // Keyboard only: the tabs, the key field and the button are reachable and labelled.
      await page.getByRole('tab', { name: 'API key' }).click();
      await page.getByRole('textbox', { name: 'API key' }).fill(ADMIN_KEY);
      await page.keyboard.press('Enter');
      await page.waitForURL('**/offers');
      await offerRows(page).first().waitFor();
      // The navigation is off the screen until the menu button opens it.
      const navigation = page.getByRole('link', { name: 'Instances' });
      const hidden = await navigation.boundingBox();
      expect(hidden === null || hidden.x + hidden.width <= 0).toBe(true);
      await page.getByRole('button', { name: 'Open navigation' }).click();
      await navigation.click();
      await page.waitForURL('**/instances');
      await page.getByRole('heading', { name: 'Instances' }).waitFor();
      const overflow = await page.evaluate<number>(
        'document.documentElement.scrollWidth - window.innerWidth',
      );
      expect(overflow).toBeLessThanOrEqual(0);
      await rig.shot(page, 'renter-06-phone');
      await context.close();
    }, 60_000);
  });

  describe('a host journey', () => {
    let rentedMachine = 0;

    beforeAll(async () => {
      // A renter runs an instance on one of the host's machines, so the host earns.
      const email = `${uniqueName('renter')}@example.com`;
      await rig.call('POST', '/api/v0/users/', null, { email, password: PASSWORD });
      const { session_key: key } = await rig.call<{ session_key: string }>(
        'POST',
        '/api/v0/users/login/',
        null,
        {
          email,
          password: PASSWORD,
        },
      );
      await grantCredit(rig.base, ADMIN_KEY, key, 50);
      const { offers } = await rig.call<{ offers: { id: number; machine_id: number; gpu_name: string }[] }>(
        'POST',
        '/api/v0/bundles/',
        key,
        { gpu_name: { eq: 'RTX 3090' }, order: [['num_gpus', 'asc']] },
      );
      const offer = offers[0]!;
      rentedMachine = offer.machine_id;
      await rig.call('PUT', `/api/v0/asks/${offer.id}/`, key, {
        image: 'busybox',
        disk: 10,
        runtype: 'ssh_direct',
      });
    }, 120_000);

    const machineCard = (page: Page, gpu: string): Locator =>
      page.getByRole('article', { name: /^Machine \d+$/ }).filter({ hasText: gpu });

    it('shows machines, offers and earnings; reprices, schedules and cancels maintenance, unlists and lists', async () => {
      const context = await rig.context();
      const page = await context.newPage();
      await page.goto('/');
      await page.getByRole('tab', { name: 'API key' }).click();
      await page.getByRole('textbox', { name: 'API key' }).fill(ADMIN_KEY);
      await page.getByRole('button', { name: 'Use this key' }).click();
      await page.waitForURL('**/offers');
      await page.getByRole('link', { name: 'Host' }).click();
      await page.waitForURL('**/host');
      await expectCount(page.getByRole('article', { name: /^Machine \d+$/ }), 3);

      // Earnings of the rented machine appear as billing runs (each second here), with no reload.
      const rented = page.getByRole('article', { name: `Machine ${rentedMachine}` });
      await eventually(
        async () => (/^\$0\.0*[1-9]/.test(await rented.getByLabel('Earned').innerText()) ? true : undefined),
        40_000,
        'earnings on the rented machine',
      );
      expect(await page.getByLabel('Total earnings').innerText()).toMatch(/^\$0\.0*[1-9]/);

      // Reprice the RTX 4090 machine: its listing and its offers follow.
      const card = machineCard(page, 'RTX 4090');
      await card.getByRole('button', { name: 'Change price' }).click();
      const listing = page.getByRole('dialog');
      await listing.getByRole('textbox', { name: 'Price per GPU per hour, $' }).fill('0.5');
      await listing.getByRole('button', { name: 'Save listing' }).click();
      await expectText(card.getByLabel('Price per GPU'), /^\$0\.500\/h$/);
      const offers = card.getByRole('table', { name: /^Offers of machine \d+$/ });
      // one GPU at $0.50 plus its storage share: $0.5xx per hour
      await expectText(offers, /1× RTX 4090\s+\$0\.5\d\d\/h/);
      await rig.shot(page, 'host-01-machines');

      // Maintenance: scheduled for tomorrow (the form's default start), then cancelled.
      await card.getByRole('button', { name: 'Schedule maintenance' }).click();
      const maintenance = page.getByRole('dialog');
      await maintenance.getByRole('textbox', { name: 'Duration, hours' }).fill('3');
      await maintenance.getByRole('combobox', { name: 'Category' }).click();
      await page.getByRole('option', { name: 'power' }).click();
      await maintenance.getByRole('button', { name: 'Schedule' }).click();
      const windows = card.getByRole('list', { name: /^Maintenance of machine \d+$/ });
      await expectText(windows, /\(3 h, power\)/);
      await rig.shot(page, 'host-02-maintenance');
      await card.getByRole('button', { name: 'Cancel maintenance' }).click();
      await card.getByText('None scheduled.').waitFor();

      // Unlist the A100 machine: no offers; list it again at a new price.
      const a100 = machineCard(page, 'A100');
      await a100.getByRole('button', { name: 'Unlist' }).click();
      await a100.getByText('not listed', { exact: true }).waitFor();
      await a100.getByText('None (not listed, or every GPU rented).').waitFor();
      await a100.getByRole('button', { name: 'List', exact: true }).click();
      await page.getByRole('dialog').getByRole('textbox', { name: 'Price per GPU per hour, $' }).fill('1.25');
      await page.getByRole('dialog').getByRole('button', { name: 'Save listing' }).click();
      await a100.getByText('listed', { exact: true }).waitFor();
      await expectText(a100.getByLabel('Price per GPU'), /^\$1\.250\/h$/);
      await a100.getByRole('table', { name: /^Offers of machine \d+$/ }).waitFor();

      // The API agrees with what the page shows.
      const { machines } = await rig.call<{
        machines: { id: number; gpu_name: string; listed_gpu_cost: number }[];
      }>('GET', '/api/v0/machines/', ADMIN_KEY);
      expect(machines.find((m) => m.gpu_name.includes('A100'))?.listed_gpu_cost).toBe(1.25);
      expect(machines.find((m) => m.gpu_name.includes('4090'))?.listed_gpu_cost).toBe(0.5);
      await rig.shot(page, 'host-03-relisted');
      await context.close();
    }, 120_000);
  });

  describe('the account pages', () => {
    it('API keys with the permission editor, SSH keys, a template rented from, billing and the audit log', async () => {
      const context = await rig.context();
      const page = await context.newPage();
      await page.goto('/keys');
      await page.getByRole('tab', { name: 'API key' }).click();
      await page.getByRole('textbox', { name: 'API key' }).fill(ADMIN_KEY);
      await page.getByRole('button', { name: 'Use this key' }).click();
      await page.waitForURL('**/offers');
      await page.getByRole('link', { name: 'Keys' }).click();
      await page.waitForURL('**/keys');

      // A key that may only read instances: the editor's checkboxes make its scope.
      const form = page.getByRole('form', { name: 'New API key' });
      await form.getByRole('textbox', { name: 'Key name' }).fill('ci-reader');
      await form.getByRole('checkbox', { name: /Account: read/ }).uncheck();
      expect(await form.getByRole('checkbox', { name: /Instances: read/ }).isChecked()).toBe(true);
      await form.getByRole('button', { name: 'Create key' }).click();
      const value = (await page.getByLabel('New key value').innerText()).trim();
      const keys = page.getByRole('table', { name: 'API keys' });
      await expectText(keys, /ci-reader\s+instance_read\b/);
      const asReader = (method: string, path: string, body?: unknown) =>
        fetch(`${rig.base}${path}`, {
          method,
          headers: { Authorization: `Bearer ${value}`, 'Content-Type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      expect((await asReader('GET', '/api/v0/instances/')).status).toBe(200);
      expect((await asReader('GET', '/api/v0/users/current/')).status).toBe(403);
      expect((await asReader('PUT', '/api/v0/asks/1001/', { image: 'busybox' })).status).toBe(403);
      await rig.shot(page, 'account-01-keys');
      await keys.getByRole('button', { name: 'Delete API key ci-reader' }).click();
      await keys.getByText('ci-reader').waitFor({ state: 'detached' });
      expect((await asReader('GET', '/api/v0/instances/')).status).toBe(401);

      // An SSH key.
      const ssh = ed25519PublicKeyLine('console@test');
      await page.getByRole('textbox', { name: 'Public key' }).fill(ssh);
      await page.getByRole('button', { name: 'Add SSH key' }).click();
      await expectText(page.getByRole('list', { name: 'Your SSH keys' }), /ssh-ed25519 /);

      // A template, then a rental from it.
      await page.getByRole('link', { name: 'Templates' }).click();
      await page.getByRole('textbox', { name: 'Template name' }).fill('console-template');
      await page.getByRole('textbox', { name: 'Template image' }).fill('alpine');
      await page.getByRole('textbox', { name: 'Template on-start script' }).fill('echo from the template');
      await page.getByRole('button', { name: 'Create template' }).click();
      await expectText(page.getByRole('table', { name: 'Templates' }), /console-template\s+alpine/);
      await page.getByRole('link', { name: 'Search offers' }).click();
      await offerRows(page).first().waitFor();
      await offerRows(page)
        .first()
        .getByRole('button', { name: /^Rent offer/ })
        .click();
      const dialog = page.getByRole('dialog');
      await dialog.getByRole('combobox', { name: 'Template' }).click();
      await page.getByRole('option', { name: 'console-template (alpine)' }).click();
      expect(await dialog.getByRole('textbox', { name: 'Image' }).inputValue()).toBe('');
      await dialog.getByRole('button', { name: /^Rent for \$/ }).click();
      await page.waitForURL('**/instances');
      const card = page.getByRole('article', { name: /^Instance \d+$/ }).filter({ hasText: 'alpine' });
      await card.getByText('running', { exact: true }).waitFor({ timeout: 30_000 });

      // Billing: the balance, the charges of that instance as billing runs, the demo credit among invoices.
      await page.getByRole('link', { name: 'Billing' }).click();
      await expectText(page.getByLabel('Account balance'), /^\$\d+\.\d\d$/);
      await eventually(
        async () =>
          (await page.getByRole('table', { name: 'Charges' }).locator('tbody tr').count()) > 0
            ? true
            : undefined,
        30_000,
        'a charge in the billing page',
      );
      await page.getByRole('tab', { name: 'Invoices' }).click();
      await page.getByRole('table', { name: 'Invoices' }).locator('tbody tr').first().waitFor();
      await rig.shot(page, 'account-02-billing');

      // The audit log has the key's creation and deletion.
      await page.getByRole('link', { name: 'Audit log' }).click();
      const audit = page.getByRole('table', { name: 'Audit log' });
      await expectText(audit, /ApiKeyCreated/);
      await expectText(audit, /ApiKeyDeleted/);
      await rig.shot(page, 'account-03-audit');
      await context.close();
    }, 120_000);
  });

  describe('sign-up and 2FA settings', () => {
    it('signs up, verifies the e-mail, turns on an authenticator app from its QR code, logs in with a backup code', async () => {
      const context = await rig.context();
      const page = await context.newPage();
      const email = `${uniqueName('signup')}@example.com`;
      await page.goto('/login');
      await page.getByRole('link', { name: 'New here? Create an account' }).click();
      await page.waitForURL('**/signup');
      await page.getByRole('textbox', { name: 'E-mail' }).fill(email);
      await page.getByRole('textbox', { name: 'Password', exact: true }).fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign up' }).click();
      await page.getByRole('form', { name: 'Verify your e-mail' }).waitFor();
      const verification = await eventually(async () => mailedCode(rig.mailer, email), 10_000, 'the mail');
      await page.getByRole('textbox', { name: 'Verification code' }).fill(verification);
      await page.getByRole('button', { name: 'Verify and log in' }).click();
      await page.waitForURL('**/offers');

      // 2FA settings: off; add an authenticator app (authorized by a mailed code, set up from the QR code).
      await page.getByRole('link', { name: 'Security (2FA)' }).click();
      await expectText(page.getByLabel('2FA status'), /^off$/i);
      await page.getByRole('button', { name: 'Add an authenticator app' }).click();
      const mailsBefore = rig.mailer.sent.length;
      await page.getByRole('button', { name: 'Send me a code' }).click();
      await eventually(
        async () => (rig.mailer.sent.length > mailsBefore ? true : undefined),
        10_000,
        'the code',
      );
      await page.getByRole('textbox', { name: 'Code from the e-mail' }).fill(mailedCode(rig.mailer, email));
      await page.getByRole('button', { name: 'Continue' }).click();
      const qr = page.getByRole('img', { name: 'QR code of the authenticator secret' });
      await qr.waitFor();
      expect(await qr.getAttribute('src')).toMatch(/^data:image\/png;base64,/);
      const secret = (await page.getByLabel('Authenticator secret').innerText()).trim();
      await page.getByRole('textbox', { name: 'Code from the app' }).fill(totpCode(secret, new Date()));
      await rig.shot(page, 'security-01-qr');
      await page.getByRole('button', { name: 'Turn it on' }).click();
      const codes = page.getByRole('list', { name: 'Backup codes' }).getByRole('listitem');
      await expectCount(codes, 10);
      const backup = (await codes.first().innerText()).trim();
      await expectText(page.getByLabel('2FA status'), /^on$/i);
      await rig.shot(page, 'security-02-on');

      // The next login asks for the second factor; a backup code works once.
      await page.getByRole('button', { name: 'Log out' }).click();
      await page.waitForURL('**/login');
      await page.getByRole('textbox', { name: 'Username or e-mail' }).fill(email);
      await page.getByRole('textbox', { name: 'Password', exact: true }).fill(PASSWORD);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByRole('radio', { name: 'Backup code' }).check();
      await page.getByRole('textbox', { name: 'Backup code' }).fill(backup);
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.waitForURL('**/offers');
      await page.getByRole('link', { name: 'Security (2FA)' }).click();
      await expectText(page.getByLabel('Backup codes left'), /^9$/);
      await context.close();
    }, 120_000);
  });
});

/**
 * The session the console uses in this tab: after a 2FA login, the platform's HttpOnly cookie (the page's
 * scripts cannot read it; the test reads the browser's cookie jar); the API calls act as the same renter.
 */
async function sessionKeyOf(page: Page): Promise<string> {
  const stored = await page.evaluate<string | null>("sessionStorage.getItem('rigmarket.key')");
  const cookie = (await page.context().cookies()).find((c) => c.name === 'session_key');
  const key = stored ?? cookie?.value;
  if (!key) throw new Error('the console holds no session');
  return key;
}

async function expectText(locator: Locator, pattern: RegExp): Promise<void> {
  await eventually(
    async () => (pattern.test(await locator.innerText()) ? true : undefined),
    20_000,
    `${pattern} in the page`,
  );
}

function offerRows(page: Page): Locator {
  return page.getByRole('table', { name: 'Offers' }).locator('tbody').getByRole('row');
}

async function expectCount(locator: Locator, count: number): Promise<void> {
  await eventually(
    async () => ((await locator.count()) === count ? true : undefined),
    20_000,
    `${count} items`,
  );
}
