import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../processors/config/accounts.js';
import { createPlatformAdmin } from '../../processors/config/platform-admins.js';
import { connectSandboxNumbers } from '../../processors/instances/sandbox-pairing.js';
import { startApi, type RunningApi } from '../../stack/api-role.js';
import type { Clients } from '../../stack/clients.js';
import { startDemoPartner, type DemoPartner } from '../../stack/demo/server.js';
import { startRoles, type RunningRoles } from '../../stack/roles.js';
import { axeViolations, launchChromium, screenshots } from '../support/browser.js';
import { testClients } from '../support/clients.js';
import { untilConnectorServes } from '../support/connector-ready.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { readMailbox } from '../support/mailbox.js';
import { MESSAGES } from '../../widget/src/messages.js';

interface Told {
  readonly kind: 'callback' | 'event' | 'demo';
  readonly name: string;
  readonly detail: Record<string, unknown> | null;
}

/** A screenshot of each screen of the component, which has no axe violation at any level (its default styles). */
function screens(name: string): (page: Page, step: string) => Promise<void> {
  const shot = screenshots(name);
  return async (page, step) => {
    await shot(page, step);
    expect({ step, violations: await axeViolations(page, 'service-connect') }).toEqual({ step, violations: [] });
  };
}

/**
 * The Connect component in Chromium, opened by the demo partner's page (its own origin, a CSP
 * allowing only what spec 4.6 lists) against the gateway running in this process on the real
 * stack: the new-account flow in Portuguese by `ServiceConnect.open`, the existing-account flow in
 * English by `<service-connect>` with the code read from the SMTP server, a connection revoked
 * mid-flow, an expired session, keyboard use and an axe scan.
 */
describe('the Connect component in a browser', () => {
  let env: TestEnv;
  let clients: Clients;
  let roles: RunningRoles;
  let api: RunningApi;
  let demo: DemoPartner;
  let browser: Browser;
  let base: string;
  let now = Date.now();
  const violations: string[] = [];
  const consoleAll: string[] = [];
  const unique = (label: string) => `${label}-${env.id}@shop.test`;

  /** `pageLocale` false: the page sets no language, and the component takes the customer's from the session. */
  /** `renew` false: the page gives no `fetchSession`, so an expired session ends the component. */
  /** `clock` true: the page's timers run on a clock the test moves forward (`page.clock.runFor`). */
  async function openDemo(form: { email: string; locale: string; mode: 'modal' | 'inline'; externalId: string; country?: string; pageLocale?: boolean; phone?: boolean; renew?: boolean; clock?: boolean }): Promise<Page> {
    const page = await browser.newPage({ locale: 'en-US', ...(form.phone === true ? { hasTouch: true, isMobile: true, viewport: { width: 390, height: 844 } } : {}) });
    if (form.clock === true) await page.clock.install();
    page.on('console', (message) => {
      consoleAll.push(message.text());
      if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
    });
    page.on('response', (response) => {
      if (response.status() >= 400) consoleAll.push(`${response.request().method()} ${new URL(response.url()).pathname} ${response.status()}`);
    });
    await page.goto(demo.url);
    await page.fill('input[name=email]', form.email);
    await page.fill('input[name=country]', form.country ?? 'BR');
    await page.fill('input[name=external_id]', form.externalId);
    await page.selectOption('select[name=locale]', form.locale);
    if (form.pageLocale === false) await page.uncheck('input[name=page_locale]');
    if (form.renew === false) await page.uncheck('input[name=renew]');
    await page.check(`input[name=mode][value=${form.mode}]`);
    await page.click('form#session button[type=submit]');
    await page.waitForSelector('service-connect [data-step]');
    return page;
  }

  const told = (page: Page) => page.evaluate(() => (globalThis as unknown as { demoEvents: Told[] }).demoEvents);
  const stepOf = (page: Page) => page.locator('service-connect [data-step]').getAttribute('data-step');
  /** Waits for the component to show `step`; if it does not, says what it shows instead and what the page logged. */
  const untilStep = (page: Page, step: string) =>
    waitFor(`step ${step}`, async () => ((await stepOf(page)) === step ? true : undefined), { timeoutMs: 20_000 }).catch(async (e: unknown) => {
      const shown = await page.locator('service-connect [data-step]').innerText().catch(() => '(no component)');
      throw new Error(`${String(e)}; shown: ${JSON.stringify(shown)}; console: ${consoleAll.join(' | ')}`);
    });
  const partner = async (method: 'GET' | 'DELETE', path: string) => {
    const response = await request(`${base}${path}`, { method, headers: { authorization: `Bearer ${demo.secret}` } });
    const text = await response.body.text();
    return { status: response.statusCode, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
  };
  /** The sandbox phone scans the QR the component shows. */
  async function scanShownQr(page: Page): Promise<void> {
    const qr = await page.locator('service-connect svg.qr').getAttribute('data-qr', { timeout: 20_000 });
    const scanned = await request(`${base}/sandbox/phone/scan`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ qr_code: qr }) });
    expect(scanned.statusCode).toBe(202);
    await scanned.body.dump();
  }

  beforeAll(async () => {
    env = await createTestEnv({
      PORT: '0',
      HOST: '127.0.0.1',
      SERVICE_NAME: 'Zap Gateway',
      SERVICE_TERMS_URL: 'https://gateway.example/terms',
      SERVICE_PRIVACY_URL: 'https://gateway.example/privacy',
    });
    clients = await testClients(env);
    roles = await startRoles(['processor', 'connector', 'sweeper'], clients);
    api = await startApi(clients, { listen: true, clock: () => now });
    base = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`;
    demo = await startDemoPartner({ producer: clients.producer, directory: api.directory }, { host: '127.0.0.1', port: 0, apiBase: base, widgetUrl: base });
    browser = await launchChromium();
    await untilConnectorServes(clients);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await demo?.close();
    await api?.stop();
    await roles?.stop();
    await clients?.close();
    await env?.dispose();
  });

  // In Portuguese the page sets the language; in Spanish only the session's customer.locale says it (the page is in English).
  for (const [locale, pageLocale] of [['pt', true], ['es', false]] as const) {
    it(`walks a new customer in ${locale} (${pageLocale ? "the page's language" : "the session's"}) through ServiceConnect.open: account, sandbox payment, QR, complete; every callback with its DOM event`, async () => {
      const words = MESSAGES[locale];
      const shot = screens(`new-account-${locale}`);
      const externalId = `nova-${locale}-${env.id}`;
      const page = await openDemo({ email: unique(`nova-${locale}`), locale, mode: 'modal', externalId, pageLocale });
      const component = page.locator('service-connect');
      await untilStep(page, 'account');
      expect(await component.getByRole('dialog').count()).toBe(1);
      expect(await component.locator('.panel').getAttribute('lang')).toBe(locale);
      // The service is named, and its terms and privacy policy linked, before an account is made.
      await component.getByText(words.accountQuestion.replace('{service}', 'Zap Gateway')).waitFor();
      expect(await component.getByRole('link', { name: words.terms }).getAttribute('href')).toBe('https://gateway.example/terms');
      expect(await component.getByRole('link', { name: words.privacy }).getAttribute('href')).toBe('https://gateway.example/privacy');
      await shot(page, 'account');

      await component.getByRole('button', { name: words.create }).click();
      await untilStep(page, 'payment');
      expect(await component.locator('.price').innerText()).toMatch(/149,00/);
      await component.getByLabel(words.pix).check();
      await shot(page, 'payment');
      await component.getByRole('button', { name: words.continue }).click();
      await component.getByRole('button', { name: words.pay.replace('{price}', '').trim() }).click();
      await untilStep(page, 'number');
      await shot(page, 'number');

      await component.getByRole('button', { name: words.byQr }).click();
      await component.getByRole('img', { name: words.qrAlt }).waitFor({ timeout: 20_000 });
      await shot(page, 'qr');
      await scanShownQr(page);
      await untilStep(page, 'manage');
      await shot(page, 'manage');
      await component.getByRole('button', { name: words.done }).click();
      await expect(page.locator('service-connect').count()).resolves.toBe(0);

      const all = await told(page);
      const callbacks = all.filter((t) => t.kind === 'callback');
      const events = all.filter((t) => t.kind === 'event');
      expect(callbacks.map((t) => t.name)).toEqual(['ready', 'step', 'step', 'complete', 'step', 'close']);
      // Each callback has its DOM event, with the callback's argument as detail.
      expect(events.map((t) => [t.name, t.detail])).toEqual(callbacks.map((t) => [t.name, t.detail]));
      const { connectionId, sessionId } = callbacks[0]!.detail as { connectionId: string; sessionId: string };
      // Every event names the session, for support; the id is not the token.
      expect(sessionId).toMatch(/^csn_/);
      expect(callbacks[0]!.detail).toEqual({ step: 'account', connectionId, status: 'pending_account', sessionId });
      expect(callbacks.filter((t) => t.name === 'step').map((t) => t.detail)).toEqual([
        { step: 'payment', sessionId },
        { step: 'number', sessionId },
        { step: 'manage', sessionId },
      ]);
      const completed = callbacks[3]!.detail as { code: string; connectionId: string; externalId: string };
      expect(completed.code).toMatch(/^cc_/);
      expect(completed).toEqual({ code: completed.code, connectionId, externalId, sessionId });
      expect(callbacks[5]!.detail).toEqual({ reason: 'done', step: 'manage', sessionId });
      // The code is the partner's: exchanged, it gives the key of the connection.
      const exchanged = await request(`${base}/partner/connect/exchange`, {
        method: 'POST',
        headers: { authorization: `Bearer ${demo.secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ code: completed.code }),
      });
      expect(exchanged.statusCode).toBe(200);
      expect(((await exchanged.body.json()) as { api_key: string }).api_key).toMatch(/^svc_live_/);
      expect(violations).toEqual([]);
      await page.close();
    });
  }

  it('offers the pairing code first on a phone, and completes when a code shown before a reopen connects the number', async () => {
    const words = MESSAGES.en;
    const customer = { email: unique('phone'), locale: 'en', mode: 'modal', externalId: `phone-${env.id}`, phone: true } as const;
    const first = await openDemo(customer);
    const component = first.locator('service-connect');
    await untilStep(first, 'account');
    // A host page wider than the screen widens the layout viewport: the modal stays over what the customer sees.
    await first.evaluate(`document.body.append(Object.assign(document.createElement('pre'), { textContent: 'x'.repeat(600) }))`);
    const withinView = `(() => {
      const rect = document.querySelector('service-connect').shadowRoot.querySelector('.panel').getBoundingClientRect();
      const view = window.visualViewport;
      return rect.width > 0 && rect.left >= view.offsetLeft - 1 && rect.right <= view.offsetLeft + view.width + 1 && rect.top >= view.offsetTop - 1;
    })()`;
    await waitFor('the modal within the visual viewport', async () => (await first.evaluate<boolean>(withinView)) || undefined, { timeoutMs: 5_000 });
    await component.getByRole('button', { name: words.create }).click();
    await untilStep(first, 'payment');
    await component.getByLabel(words.pix).check();
    await component.getByRole('button', { name: words.continue }).click();
    await component.getByRole('button', { name: /^Pay R\$/ }).click();
    await untilStep(first, 'number');
    const buttons = component.locator('[data-step=number] button');
    expect(await buttons.allInnerTexts()).toEqual([words.byCode, words.byQr]);
    expect(await buttons.first().getAttribute('class')).toBe('primary');
    await buttons.first().click();
    const shown = (await component.locator('.pairing').innerText({ timeout: 20_000 })).replace('-', '');
    expect(await axeViolations(first, 'service-connect'), 'the pairing code on a phone').toEqual([]);
    await first.keyboard.press('Escape');
    await first.close();

    // Reopened: the customer types the code the first component showed, and this one follows the number.
    const again = await openDemo(customer);
    await untilStep(again, 'number');
    const scanned = await request(`${base}/sandbox/phone/scan`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ pairing_code: shown }) });
    expect(scanned.statusCode, await scanned.body.text()).toBe(202);
    await untilStep(again, 'manage');
    expect((await told(again)).filter((t) => t.kind === 'callback').map((t) => t.name)).toEqual(['ready', 'complete', 'step']);
    await again.close();
  });

  it('links an existing account in English inside <service-connect>, with the code read from the SMTP server', async () => {
    const shot = screens('existing-account-en');
    const email = unique('owner');
    await createAccount(clients.producer, { name: 'Owner Co', email, plan: 'pro', sandboxNumbers: 1 }, connectSandboxNumbers(clients.producer));
    await api.directory.until(() => api.directory.usersWithEmail(email).length > 0, 15_000);
    const page = await openDemo({ email, locale: 'en', mode: 'inline', externalId: `owner-${env.id}`, country: 'US' });
    const component = page.locator('service-connect');
    await untilStep(page, 'account');
    await expect(component.getByText(`There is already an account for ${email}.`).count()).resolves.toBe(1);
    expect(await component.getByRole('dialog').count()).toBe(0);
    await shot(page, 'link');
    await component.getByRole('button', { name: 'Send code' }).click();
    await untilStep(page, 'verify_email');
    await expect(component.getByText(/We sent a six-digit code to o\*\*\*@shop\.test/).count()).resolves.toBe(1);

    await component.getByLabel('Six-digit code').fill('000000');
    await component.getByRole('button', { name: 'Confirm' }).click();
    await component.getByText('That code is not right, or it has expired.').waitFor();
    await component.getByRole('status').filter({ hasText: 'You can try 4 more times.' }).waitFor();
    await shot(page, 'wrong-code');
    const mail = await waitFor('the code e-mail', async () => (await readMailbox(email))[0], { timeoutMs: 20_000 });
    await component.getByLabel('Six-digit code').fill(/\b(\d{6})\b/.exec(mail.text)![1]!);
    await component.getByRole('button', { name: 'Confirm' }).click();
    await untilStep(page, 'number');
    // What the partner's key may do is listed before the customer authorises it.
    await component.getByText('Demo Partner will be able to:').waitFor();
    expect(await component.locator('ul.scopes li').allInnerTexts()).toEqual(['See your numbers and their status', 'Send messages from your numbers', 'Read your messages']);
    await shot(page, 'authorize');
    await component.getByRole('button', { name: 'Authorize Demo Partner' }).click();
    await untilStep(page, 'manage');
    await shot(page, 'manage');

    const events = (await told(page)).filter((t) => t.kind === 'event');
    expect(events.map((t) => t.name)).toEqual(['ready', 'step', 'step', 'complete', 'step']);
    expect(events.map((t) => t.detail?.step).filter(Boolean)).toEqual(['account', 'verify_email', 'number', 'manage']);
    expect(violations).toEqual([]);
    await page.close();
  });

  it("gets a customer out of a used-up code with a new one, and wrong codes typed here never lock the e-mail's owner out of the panel", async () => {
    const words = MESSAGES.en;
    const shot = screens('used-up-code');
    const email = unique('used-up');
    await createAccount(clients.producer, { name: 'Used Up Co', email, plan: 'pro', sandboxNumbers: 1 }, connectSandboxNumbers(clients.producer));
    await api.directory.until(() => api.directory.usersWithEmail(email).length > 0, 15_000);
    const mails = async (after: number) => waitFor('a new code e-mail', async () => {
      const box = await readMailbox(email);
      return box.length > after ? /\b(\d{6})\b/.exec(box[box.length - 1]!.text)![1]! : undefined;
    }, { timeoutMs: 20_000 });
    /** Sends a code from the verify step and types a wrong one until it is used up. */
    const useUp = async (page: Page) => {
      const component = page.locator('service-connect');
      for (let left = 4; left >= 0; left--) {
        await component.getByLabel(words.codeLabel).fill('000000');
        await component.getByRole('button', { name: words.confirm }).click();
        if (left > 0) await component.getByRole('status').filter({ hasText: words.attemptsLeft.replace('{n}', String(left)) }).waitFor();
      }
      await component.getByText(words.codeUsedUp).waitFor();
      expect(await component.getByRole('button', { name: words.confirm }).isDisabled()).toBe(true);
    };

    const page = await openDemo({ email, locale: 'en', mode: 'inline', externalId: `used-up-${env.id}`, clock: true });
    const component = page.locator('service-connect');
    await untilStep(page, 'account');
    await component.getByRole('button', { name: words.sendCode }).click();
    await untilStep(page, 'verify_email');
    await mails(0);
    await useUp(page);
    await shot(page, 'used-up');
    // A new code once the minute between sends has passed, on the server's clock and the page's.
    now += 61_000;
    await page.clock.runFor(61_000);
    await component.getByRole('button', { name: words.resend }).click();
    const fresh = await mails(1);
    await waitFor('the used-up notice gone', async () => ((await component.getByText(words.codeUsedUp).count()) === 0) || undefined, { timeoutMs: 10_000 });
    await component.getByLabel(words.codeLabel).fill(fresh);
    await component.getByRole('button', { name: words.confirm }).click();
    await untilStep(page, 'number');
    await page.close();

    // Another component session for the same e-mail takes its hour's last wrong attempts (ten in all)...
    const again = await openDemo({ email, locale: 'en', mode: 'inline', externalId: `used-up-again-${env.id}` });
    await untilStep(again, 'account');
    await again.locator('service-connect').getByRole('button', { name: words.sendCode }).click();
    await untilStep(again, 'verify_email');
    await mails(2);
    await useUp(again);
    await again.close();
    // ... and the e-mail's owner still signs in to the panel with the code it sends.
    const panel = await browser.newPage({ locale: 'en-US' });
    await panel.goto(`${base}/panel`);
    await panel.getByLabel('E-mail').fill(email);
    await panel.getByRole('button', { name: 'Send me a code' }).click();
    const code = await mails(3);
    await panel.getByLabel('Code').fill(code);
    await panel.getByRole('button', { name: 'Sign in' }).click();
    await panel.getByRole('button', { name: 'Sign out' }).waitFor({ timeout: 10_000 });
    await panel.close();
    expect(violations).toEqual([]);
  });

  it('shows the end when the partner revokes mid-flow, and tells the host when the session expires', async () => {
    const shot = screens('revoked-and-expired');
    const page = await openDemo({ email: unique('revoked'), locale: 'de', mode: 'modal', externalId: `revoked-${env.id}` });
    const component = page.locator('service-connect');
    await untilStep(page, 'account');
    const { connectionId, sessionId } = (await told(page)).find((t) => t.name === 'ready')!.detail as { connectionId: string; sessionId: string };
    expect((await partner('DELETE', `/partner/connections/${connectionId}`)).status).toBe(204);
    await component.getByRole('button', { name: 'Neues Konto anlegen' }).click();
    await untilStep(page, 'revoked');
    await component.getByText('Verbindung beendet').waitFor();
    await shot(page, 'revoked');
    expect((await told(page)).filter((t) => t.kind === 'callback').map((t) => [t.name, t.detail])).toEqual([
      ['ready', { step: 'account', connectionId, status: 'pending_account', sessionId }],
      ['step', { step: 'revoked', sessionId }],
    ]);
    await page.close();

    // A page without fetchSession: the expired session ends in the error screen, which closes.
    const later = await openDemo({ email: unique('late'), locale: 'fr', mode: 'modal', externalId: `late-${env.id}`, renew: false });
    await untilStep(later, 'account');
    const lateSession = ((await told(later)).find((t) => t.name === 'ready')!.detail as { sessionId: string }).sessionId;
    now += 30 * 60_000;
    await later.locator('service-connect').getByRole('button', { name: 'Créer un nouveau compte' }).click();
    await untilStep(later, 'error');
    await shot(later, 'expired');
    const errors = (await told(later)).filter((t) => t.name === 'error');
    const expired = { code: 'connect_session_expired', message: 'Cette session a expiré. Ouvrez à nouveau la connexion.', sessionId: lateSession };
    expect(errors.map((t) => [t.kind, t.detail])).toEqual([['callback', expired], ['event', expired]]);
    await later.locator('service-connect').getByRole('button', { name: 'Fermer' }).last().click();
    await expect(later.locator('service-connect').count()).resolves.toBe(0);
    expect((await told(later)).filter((t) => t.kind === 'callback' && t.name === 'close').map((t) => t.detail)).toEqual([
      { reason: 'dismissed', step: 'error', sessionId: lateSession },
    ]);
    now = Date.now();
    await later.close();
  });

  it('renews a session that expires midway through the page\'s fetchSession, and goes on where the customer was', async () => {
    const page = await openDemo({ email: unique('renewed'), locale: 'en', mode: 'modal', externalId: `renewed-${env.id}` });
    const component = page.locator('service-connect');
    await untilStep(page, 'account');
    const first = ((await told(page)).find((t) => t.name === 'ready')!.detail as { sessionId: string }).sessionId;
    now += 30 * 60_000;
    try {
      await component.getByRole('button', { name: 'Create a new account' }).click();
      await untilStep(page, 'payment');
      const all = await told(page);
      const renewed = all.filter((t) => t.kind === 'demo' && t.name === 'session renewed');
      expect(renewed).toHaveLength(1);
      const second = (renewed[0]!.detail as { session_id: string }).session_id;
      expect(second).toMatch(/^csn_/);
      expect(second).not.toBe(first);
      expect(all.filter((t) => t.name === 'error')).toEqual([]);
      // Events after the renewal name the new session.
      expect(all.filter((t) => t.kind === 'callback' && t.name === 'step').map((t) => t.detail)).toEqual([{ step: 'payment', sessionId: second }]);
      await component.getByRole('button', { name: 'Close' }).first().click();
      expect((await told(page)).filter((t) => t.kind === 'callback' && t.name === 'close').map((t) => t.detail)).toEqual([
        { reason: 'dismissed', step: 'payment', sessionId: second },
      ]);
    } finally {
      now = Date.now();
      await page.close();
    }
  });

  it("tells the host the partner's refusals by their codes: an origin taken off the list, a deactivated partner", async () => {
    const admin = await createPlatformAdmin(clients.producer, unique('ops'));
    await api.directory.until(() => api.directory.platformAdmins.has(admin.id), 15_000);
    const platform = async (method: 'PATCH' | 'POST', path: string, body?: unknown) => {
      const response = await request(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${admin.credential}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      expect(response.statusCode, await response.body.text()).toBe(200);
    };
    const refusedWith = async (code: string, change: () => Promise<void>, undo: () => Promise<void>) => {
      const page = await openDemo({ email: unique(code), locale: 'en', mode: 'modal', externalId: `${code}-${env.id}` });
      await untilStep(page, 'account');
      await change();
      try {
        await page.locator('service-connect').getByRole('button', { name: MESSAGES.en.create }).click();
        await untilStep(page, 'error');
        const message = MESSAGES.en[`error_${code}` as keyof typeof MESSAGES.en];
        await page.locator('service-connect').getByText(message).waitFor();
        expect(await axeViolations(page, 'service-connect')).toEqual([]);
        const errors = (await told(page)).filter((t) => t.name === 'error');
        const sessionId = errors[0]?.detail?.sessionId;
        expect(sessionId).toMatch(/^csn_/);
        expect(errors.map((t) => [t.kind, t.detail])).toEqual([
          ['callback', { code, message, sessionId }],
          ['event', { code, message, sessionId }],
        ]);
      } finally {
        await undo();
        await page.close();
      }
    };
    const origin = new URL(demo.url).origin;
    await refusedWith(
      'origin_not_allowed',
      () => platform('PATCH', `/platform/partners/${demo.partnerId}`, { allowed_origins: ['https://elsewhere.example'] }),
      () => platform('PATCH', `/platform/partners/${demo.partnerId}`, { allowed_origins: [origin] }),
    );
    await refusedWith(
      'partner_inactive',
      () => platform('POST', `/platform/partners/${demo.partnerId}/deactivate`),
      () => platform('POST', `/platform/partners/${demo.partnerId}/activate`),
    );
  });

  it('works from the keyboard alone, styles itself under the strict CSP, and has no axe violation at any level', async () => {
    const page = await openDemo({ email: unique('keys'), locale: 'en', mode: 'modal', externalId: `keys-${env.id}` });
    await untilStep(page, 'account');
    // The constructed stylesheet applied although the page allows no inline style.
    const primary = page.locator('service-connect').getByRole('button', { name: 'Create a new account' });
    const background = await primary.evaluate(
      (button) => (globalThis as unknown as { getComputedStyle(node: unknown): { backgroundColor: string } }).getComputedStyle(button).backgroundColor,
    );
    expect(background).toBe('rgb(15, 110, 86)');

    expect(await axeViolations(page, 'service-connect')).toEqual([]);

    // Tab from the screen's top to "Create a new account" and press Enter.
    const focused = () => primary.evaluate((button) => (button as unknown as { matches(selector: string): boolean }).matches(':focus'));
    for (let i = 0; i < 6 && !(await focused()); i++) await page.keyboard.press('Tab');
    expect(await focused()).toBe(true);
    await page.keyboard.press('Enter');
    await untilStep(page, 'payment');

    // A modal: Tab goes round its own controls, never to the page behind; the page does not scroll;
    // a second open() opens nothing; no banner landmark of its own.
    const focusInComponent = () => page.evaluate<string>(`document.activeElement?.tagName.toLowerCase() + '>' + (document.activeElement?.shadowRoot?.activeElement?.outerHTML ?? '').slice(0, 60)`);
    for (let i = 0; i < 12; i++) {
      await page.keyboard.press(i % 3 === 2 ? 'Shift+Tab' : 'Tab');
      expect(await focusInComponent()).toMatch(/^service-connect>/);
    }
    expect(await page.evaluate<string>('document.documentElement.style.overflow')).toBe('hidden');
    await page.evaluate(() => (globalThis as unknown as { ServiceConnect: { open(o: unknown): unknown } }).ServiceConnect.open({ session: 'cs_second' }));
    expect(await page.locator('service-connect').count()).toBe(1);
    expect(await page.evaluate<number>(`document.querySelector('service-connect').shadowRoot.querySelectorAll('header, [role=banner]').length`)).toBe(0);

    await page.keyboard.press('Escape');
    await expect(page.locator('service-connect').count()).resolves.toBe(0);
    expect((await told(page)).filter((t) => t.kind === 'callback').map((t) => t.name)).toEqual(['ready', 'step', 'close']);
    // The focus goes back to what opened it, and the page scrolls again.
    expect(await page.evaluate<string>('document.activeElement?.textContent')).toBe('Connect your number');
    expect(await page.evaluate<string>('document.documentElement.style.overflow')).toBe('');
    expect(violations).toEqual([]);
    await page.close();
  });
});
