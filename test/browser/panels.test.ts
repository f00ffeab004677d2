import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type CreatedAccount } from '../../processors/config/accounts.js';
import { connectSandboxNumbers } from '../../processors/instances/sandbox-pairing.js';
import { createPlatformAdmin } from '../../processors/config/platform-admins.js';
import { asAccountId, asEventId, asInstanceId, newId, type ConnectionId } from '../../schemas/ids.js';
import type { ConfigRecord } from '../../schemas/records.js';
import { startApi, type RunningApi } from '../../stack/api-role.js';
import type { Clients } from '../../stack/clients.js';
import { startRoles, type RunningRoles } from '../../stack/roles.js';
import { topics } from '../../topics/index.js';
import { axeViolations, launchChromium, screenshots } from '../support/browser.js';
import { testClients } from '../support/clients.js';
import { untilConnectorServes } from '../support/connector-ready.js';
import { createTestEnv, waitFor, type TestEnv } from '../support/env.js';
import { readMailbox } from '../support/mailbox.js';

/** Each screen in light and in dark mode (the system setting) has no axe violation. */
async function expectAccessible(page: Page, screen: string): Promise<void> {
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme });
    expect({ screen, colorScheme, violations: await axeViolations(page) }).toEqual({ screen, colorScheme, violations: [] });
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

const LOGO = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><rect width="10" height="10" fill="#0f6e56"/></svg>');

/**
 * The panels in Chromium against the gateway running in this process on the real stack: a
 * platform administrator signs in with the code from the SMTP server, creates a partner, uploads
 * its logo, rotates a secret and deactivates it; an account admin disconnects the partner's app,
 * adds and pairs a number, creates a key that works; a member reads and cannot write; the cookie
 * and the CSRF token hold.
 */
describe('the panels in a browser', () => {
  let env: TestEnv;
  let clients: Clients;
  let roles: RunningRoles;
  let api: RunningApi;
  let browser: Browser;
  let base: string;
  let owner: CreatedAccount;
  const mail = (label: string) => `${label}-${env.id}@shop.test`;
  /** What the pages logged as errors (an invalid `pattern` among them); none is expected but refused answers. */
  const consoleErrors: string[] = [];
  let signInChecked = false;

  /** Answers the question a destructive action asked: a button of its dialog, or the Escape key. */
  async function answer(page: Page, question: RegExp, reply: string): Promise<void> {
    const dialog = page.getByRole('dialog', { name: question });
    await dialog.waitFor();
    if (reply === 'Escape') await page.keyboard.press('Escape');
    else await dialog.getByRole('button', { name: reply, exact: true }).click();
    await dialog.waitFor({ state: 'detached' });
  }

  async function signIn(email: string, shot: (page: Page, step: string) => Promise<void>): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ locale: 'en-US' });
    const page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    await page.goto(`${base}/panel`);
    await page.getByLabel('E-mail').waitFor();
    if (!signInChecked) await expectAccessible(page, 'sign-in');
    await page.getByLabel('E-mail').fill(email);
    await shot(page, 'sign-in');
    const before = (await readMailbox(email)).length;
    await page.getByRole('button', { name: 'Send me a code' }).click();
    await page.getByLabel('Code').waitFor();
    const code = await waitFor('the sign-in code', async () => {
      const box = await readMailbox(email);
      return box.length > before ? /\b(\d{6})\b/.exec(box[box.length - 1]!.text)?.[1] : undefined;
    }, { timeoutMs: 20_000 });
    if (!signInChecked) await expectAccessible(page, 'sign-in code');
    signInChecked = true;
    await page.getByLabel('Code').fill(code);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    return { context, page };
  }

  /** The secret a "shown once" box shows, then dismissed. */
  async function shownOnce(page: Page): Promise<string> {
    const secret = await page.locator('[data-secret]').innerText();
    await page.getByRole('button', { name: 'I have copied it' }).click();
    return secret;
  }

  const call = async (method: string, path: string, headers: Record<string, string>, body?: unknown) => {
    const response = await request(`${base}${path}`, {
      method: method as 'GET',
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.body.text();
    return { status: response.statusCode, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
  };

  beforeAll(async () => {
    env = await createTestEnv({ PORT: '0', HOST: '127.0.0.1' });
    clients = await testClients(env);
    roles = await startRoles(['processor', 'connector', 'dispatcher', 'sweeper'], clients);
    api = await startApi(clients, { listen: true });
    base = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`;
    browser = await launchChromium();
    await untilConnectorServes(clients);
    owner = await createAccount(clients.producer, { name: 'Padaria Sol', email: mail('owner'), plan: 'pro', sandboxNumbers: 1 }, connectSandboxNumbers(clients.producer));
    const member: ConfigRecord = { event_id: asEventId(newId('cfg')), occurred_at: Date.now(), account_id: asAccountId(owner.account_id), project_id: null, instance_id: null, entity_id: newId('usr'), entity: { kind: 'user', email: mail('member'), role: 'member', name: null } };
    await clients.producer.send(topics.config, [{ key: member.entity_id, value: member }]);
    await api.directory.applied(member.entity_id, member.event_id, 15_000);
    await createPlatformAdmin(clients.producer, mail('ops'));
    await api.directory.until(() => [...api.directory.platformAdmins.values()].some((a) => a.email === mail('ops')), 15_000);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await api?.stop();
    await roles?.stop();
    await clients?.close();
    await env?.dispose();
  });

  let partnerSecret = '';
  let partnerId = '';

  /** The partner of the first test connected to the account (the component's steps, done directly). */
  async function connectedApp(externalId: string): Promise<ConnectionId> {
    const opened = await call('POST', '/partner/connect-sessions', { authorization: `Bearer ${partnerSecret}` }, { external_id: externalId, customer: { name: 'Ana', email: mail('owner') } });
    expect(opened.status, JSON.stringify(opened.body)).toBe(201);
    const connectionId = (opened.body.connection as { id: ConnectionId }).id;
    await api.connectionWriter.linkAccount(connectionId, { accountId: owner.account_id as never, projectId: owner.project_id as never });
    await api.connectionWriter.complete(connectionId, { instanceId: asInstanceId(owner.instance_ids[0]!), hasConnectedNumber: true });
    return connectionId;
  }

  it('lets a platform administrator create a partner, upload its logo, rotate its webhook secret and deactivate it', async () => {
    const shot = screenshots('panel-platform');
    const { context, page } = await signIn(mail('ops'), shot);
    const cookie = (await context.cookies()).find((c) => c.name === 'gw_panel')!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', secure: false });

    await page.getByLabel('Name').fill('Loja Parceira');
    await page.getByLabel('Slug').fill(`loja-${env.id}`);
    await page.getByLabel('Allowed origins (one per line)').fill('https://app.loja.example');
    await page.getByLabel('Webhook URL').fill('https://api.loja.example/hooks');
    await page.getByRole('button', { name: 'Create partner' }).click();
    const secrets = (await shownOnce(page)).split('\n');
    expect(consoleErrors.filter((line) => /pattern/i.test(line))).toEqual([]);
    expect(secrets[0]).toMatch(/^svc_partner_/);
    expect(secrets[1]).toMatch(/^whsec_/);
    partnerSecret = secrets[0]!;
    const row = page.locator(`tr[data-partner="loja-${env.id}"]`);
    await row.waitFor();
    partnerId = [...api.directory.partners.values()].find((p) => p.slug === `loja-${env.id}`)!.id;
    const secretHashBefore = api.directory.partners.get(partnerId)?.secret_hash;

    // Search and filter the list.
    const partnersSection = page.locator('section', { has: page.getByRole('heading', { name: 'Partners', exact: true }) });
    await page.getByLabel('Search partners').fill('no-such-partner');
    await partnersSection.getByRole('status').filter({ hasText: '0–0 of 0' }).waitFor();
    await page.getByLabel('Search partners').fill(`loja-${env.id}`);
    await row.waitFor();
    expect(await page.locator('tr[data-partner]').count()).toBe(1);
    await page.getByLabel('Status').selectOption('deactivated');
    await row.waitFor({ state: 'detached' });
    await page.getByLabel('Status').selectOption('');
    await row.waitFor();

    // Edited in place; a webhook URL on a loopback address is flagged.
    await row.getByRole('button', { name: 'Edit' }).click();
    const edit = page.getByRole('form', { name: 'Edit Loja Parceira' });
    await edit.getByLabel('Webhook URL').fill('http://127.0.0.1:9/hooks');
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await row.locator('[data-warning]').waitFor();
    await waitFor('the new webhook URL', async () => api.directory.partners.get(partnerId)?.webhook_url === 'http://127.0.0.1:9/hooks' || undefined, { timeoutMs: 15_000 });
    await expectAccessible(page, 'partners');

    await row.locator('input[type=file]').setInputFiles({ name: 'logo.svg', mimeType: 'image/svg+xml', buffer: LOGO });
    const logo = row.getByRole('img', { name: 'Loja Parceira logo' });
    await logo.waitFor();
    await waitFor('the logo drawn', async () => ((await logo.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth)) > 0 || undefined), { timeoutMs: 10_000 });
    await shot(page, 'partner-with-logo');
    // Destructive actions ask first; Cancel and Escape change nothing and give focus back.
    const rotateSecret = row.getByRole('button', { name: 'Rotate secret' });
    await rotateSecret.click();
    await expectAccessible(page, 'confirmation');
    await answer(page, /Rotate the secret of Loja Parceira/, 'Cancel');
    expect(await rotateSecret.evaluate((button) => button === (button as unknown as { ownerDocument: { activeElement: unknown } }).ownerDocument.activeElement)).toBe(true);
    await rotateSecret.click();
    await answer(page, /Rotate the secret of Loja Parceira/, 'Escape');
    expect(await page.locator('[data-secret]').count()).toBe(0);
    expect(api.directory.partners.get(partnerId)?.secret_hash).toBe(secretHashBefore);
    await row.getByRole('button', { name: 'Rotate webhook secret' }).click();
    await answer(page, /Rotate the webhook secret of Loja Parceira/, 'Rotate the webhook secret');
    expect(await shownOnce(page)).toMatch(/^whsec_/);
    await row.getByRole('button', { name: 'Connections' }).click();
    await page.getByText('No connections yet.').waitFor();
    await row.getByRole('button', { name: 'Deactivate' }).click();
    await answer(page, /Deactivate Loja Parceira/, 'Deactivate');
    await row.getByText('deactivated').waitFor();
    expect(api.directory.partners.get(partnerId)?.active).toBe(false);
    await row.getByRole('button', { name: 'Activate' }).click();
    await row.getByRole('cell', { name: 'active', exact: true }).waitFor();
    await shot(page, 'partners');
    // The audit log says who deactivated the partner, and from where.
    const audit = page.locator('table[data-audit]');
    await waitFor('the deactivation in the audit log', async () => {
      await page.getByRole('button', { name: 'Refresh' }).click();
      return (await audit.locator('tr[data-entry="partner.deactivated"]').count()) > 0 || undefined;
    }, { timeoutMs: 15_000 });
    expect(await audit.locator('tr[data-entry="partner.deactivated"]').first().innerText()).toContain(mail('ops'));
    await page.emulateMedia({ colorScheme: 'dark' });
    expect(await page.evaluate(() => (globalThis as unknown as { getComputedStyle(node: unknown): { backgroundColor: string }; document: { body: unknown } }).getComputedStyle((globalThis as unknown as { document: { body: unknown } }).document.body).backgroundColor)).toBe('rgb(18, 21, 24)');
    await shot(page, 'partners-dark');
    await page.emulateMedia({ colorScheme: 'light' });

    // A delivery to the partner's webhook given up on: listed under its name, and sent again.
    const deadId = `dlv_${env.id}_dead`;
    await clients.producer.send(topics.deliveryDead, [{ key: partnerId, value: {
      event_id: asEventId(`evt_${env.id}_dead`), occurred_at: Date.now(), account_id: asAccountId(owner.account_id), project_id: null, instance_id: null,
      delivery_id: deadId, target_kind: 'partner_webhook', target_id: partnerId, event_type: 'connect.completed', trigger: 'scheduled',
      attempt: 4, not_before: Date.now(), last_error: 'HTTP 503', body_json: '{}',
    } }]);
    await page.reload();
    const deadRow = page.locator(`tr[data-delivery="${deadId}"]`);
    await deadRow.getByRole('cell', { name: 'Loja Parceira' }).waitFor();
    await deadRow.getByRole('cell', { name: 'HTTP 503' }).waitFor();
    await deadRow.getByRole('button', { name: 'Redeliver', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Sent again: 1.' }).waitFor();
    await shot(page, 'dead-deliveries');

    // The cookie alone writes nothing: the CSRF token is needed, and only the page has it.
    const headers = { cookie: `gw_panel=${cookie.value}` };
    expect(await call('POST', `/platform/partners/${partnerId}/deactivate`, headers)).toMatchObject({ status: 403, body: { code: 'forbidden' } });
    const me = await call('GET', '/panel/me', headers);
    expect(me).toMatchObject({ status: 200, body: { platform_admin: true } });
    expect(await call('POST', `/platform/partners/${partnerId}/rotate-secret`, { ...headers, 'x-csrf-token': 'forged' })).toMatchObject({ status: 403 });
    await context.close();
  });

  it('lets an account admin disconnect an app, add and pair a number, create a key that works, and read usage', async () => {
    const shot = screenshots('panel-account');
    const connectionId = await connectedApp('panel-app');
    const { context, page } = await signIn(mail('owner'), shot);
    const app = page.locator('li[data-app="Loja Parceira"]');
    await app.locator('img.logo').waitFor();
    await shot(page, 'apps');
    await expectAccessible(page, 'connected apps');
    await app.getByRole('button', { name: 'Disconnect' }).click();
    await answer(page, /Disconnect Loja Parceira/, 'Disconnect');
    await page.getByText('No app is connected.').waitFor();
    expect(api.connections.get(connectionId)).toMatchObject({ to_status: 'revoked', revoked_by: 'customer' });

    await page.getByRole('tab', { name: 'Numbers' }).click();
    await page.locator('tr[data-number]').first().waitFor();
    const before = await page.locator('tr[data-number]').count();
    await page.getByRole('button', { name: 'Add a number' }).click();
    await waitFor('the new number listed', async () => ((await page.locator('tr[data-number]').count()) > before ? true : undefined), { timeoutMs: 20_000 });
    const fresh = page.locator('tr[data-number]').filter({ has: page.getByRole('button', { name: 'QR code' }) }).first();
    const instanceId = await fresh.getAttribute('data-number');
    await fresh.getByRole('button', { name: 'QR code' }).click();
    const qr = await page.locator('[data-qr]').innerText({ timeout: 20_000 });
    await shot(page, 'pairing');
    expect((await call('POST', '/sandbox/phone/scan', {}, { qr_code: qr })).status).toBe(202);
    await page.locator(`tr[data-number="${instanceId}"] td[data-status]`).getByText('connected').waitFor({ timeout: 20_000 });
    await shot(page, 'numbers');
    await expectAccessible(page, 'numbers');
    // A number renamed in place: the list and the API say its new name.
    const first = page.locator(`tr[data-number="${owner.instance_ids[0]}"]`);
    await first.getByRole('button', { name: 'Rename' }).click();
    const rename = page.getByRole('form', { name: /^Rename / });
    await rename.getByLabel('Name of the number').fill('Loja centro');
    await expectAccessible(page, 'rename');
    await rename.getByRole('button', { name: 'Save' }).click();
    await rename.waitFor({ state: 'detached' });
    await first.locator('td[data-name]').getByText('Loja centro').waitFor();
    const listed = (await call('GET', '/instances', { authorization: `Bearer ${owner.api_key}` })).body.data as { id: string; nickname: string }[];
    expect(listed.find((n) => n.id === owner.instance_ids[0])?.nickname).toBe('Loja centro');
    // The list the panel reads again after the unlink comes from a projection that may not have the
    // change yet: here it is answered, once the stream's event is shown, with the list from before.
    const row = page.locator(`tr[data-number="${instanceId}"]`);
    const status = row.locator('td[data-status]');
    const listBefore = await call('GET', '/instances', { authorization: `Bearer ${owner.api_key}` });
    let lagged = false;
    await page.route(/\/instances$/, async (route) => {
      if (route.request().method() !== 'GET') return route.fallback();
      await waitFor("the stream's status shown", async () => ((await status.getAttribute('data-status')) !== 'connected' || undefined), { timeoutMs: 20_000 });
      await route.fulfill({ json: listBefore.body });
      lagged = true;
    }, { times: 1 });
    await row.getByRole('button', { name: 'Unlink' }).click();
    await answer(page, /^Unlink /, 'Unlink');
    // The unlink's action ends (its buttons usable again) once the lagging list is read.
    await waitFor('the lagging list read', async () => (lagged && (await row.getByRole('button', { name: 'Remove' }).isEnabled())) || undefined, { timeoutMs: 25_000 });
    expect(await status.getAttribute('data-status')).not.toBe('connected');
    await page.unroute(/\/instances$/);
    await page.locator(`tr[data-number="${instanceId}"]`).getByRole('button', { name: 'Remove' }).click();
    await answer(page, /^Remove /, 'Remove the number');
    await page.locator(`tr[data-number="${instanceId}"]`).waitFor({ state: 'detached', timeout: 20_000 });

    // More keys than a page holds: pages, search, and a revocation that asks first.
    for (let i = 0; i < 21; i++) expect((await call('POST', '/keys', { authorization: `Bearer ${owner.api_key}` }, { role: 'agent', scopes: ['instances:read'] })).status).toBe(201);
    await page.getByRole('tab', { name: 'API keys' }).click();
    await page.getByRole('button', { name: /Create a key/ }).click();
    const key = await shownOnce(page);
    expect(key).toMatch(/^svc_live_/);
    expect(await call('GET', '/instances', { authorization: `Bearer ${key}` })).toMatchObject({ status: 200 });
    const keyCount = ((await call('GET', '/keys', { authorization: `Bearer ${owner.api_key}` })).body.data as unknown[]).length;
    await page.getByRole('status').filter({ hasText: `1–20 of ${keyCount}` }).waitFor();
    expect(await page.locator('tr[data-key]').count()).toBe(20);
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByRole('status').filter({ hasText: `21–${keyCount} of ${keyCount}` }).waitFor();
    expect(await page.locator('tr[data-key]').count()).toBe(keyCount - 20);
    await page.getByLabel('Search keys').fill(key.slice(0, 13));
    const mine = page.locator('tr[data-key]');
    await waitFor('the search down to one key', async () => ((await mine.count()) === 1 || undefined), { timeoutMs: 5_000 });
    await mine.getByRole('button', { name: 'Revoke' }).click();
    await answer(page, /^Revoke the key /, 'Cancel');
    expect(await call('GET', '/instances', { authorization: `Bearer ${key}` })).toMatchObject({ status: 200 });
    await mine.getByRole('button', { name: 'Revoke' }).click();
    await answer(page, /^Revoke the key /, 'Revoke the key');
    await mine.getByRole('cell', { name: 'revoked' }).waitFor();
    expect(await call('GET', '/instances', { authorization: `Bearer ${key}` })).toMatchObject({ status: 401 });
    await expectAccessible(page, 'keys');
    await page.getByRole('tab', { name: 'Audit log' }).click();
    const revoked = page.locator('table[data-audit] tr[data-entry="key.revoked"]');
    await waitFor('the revocation in the audit log', async () => {
      await page.getByRole('button', { name: 'Refresh' }).click();
      return (await revoked.count()) > 0 || undefined;
    }, { timeoutMs: 15_000 });
    expect(await revoked.first().innerText()).toContain(`${mail('owner')} (panel user)`);
    await expectAccessible(page, 'audit log');
    await page.getByRole('tab', { name: 'API keys' }).click();
    await shot(page, 'keys');
    await page.getByRole('button', { name: /Create a key/ }).click();
    const sender = await shownOnce(page);

    // A send with the new key is counted in ClickHouse, and the chart shows it (read again until it does).
    expect(await call('POST', '/messages/text', { authorization: `Bearer ${sender}` }, { to: '+5511911112222', body: 'Olá' })).toMatchObject({ status: 202 });
    await waitFor('the send in the usage chart', async () => {
      await page.getByRole('tab', { name: 'Numbers' }).click();
      await page.getByRole('tab', { name: 'Usage' }).click();
      await page.getByRole('img', { name: /Messages per day/ }).waitFor();
      return (await page.locator('[data-total]').innerText()) === '1' || undefined;
    }, { timeoutMs: 30_000 });
    expect(await page.locator('svg.chart rect').count()).toBe(30);
    expect(await page.locator(`svg.chart rect[data-day="${new Date().toISOString().slice(0, 10)}"]`).getAttribute('data-messages')).toBe('1');
    expect(await page.locator('svg.chart [data-axis-day]').count()).toBeGreaterThanOrEqual(5);
    await page.locator('[data-allowance]').getByText('plan pro').waitFor();
    // One number's usage: the number that sent counts the send; a number the account never had counts nothing.
    await page.getByLabel('Number').selectOption(owner.instance_ids[0]!);
    await waitFor('the number filter applied', async () => ((await page.locator('[data-total]').innerText()) === '1' || undefined), { timeoutMs: 10_000 });
    const none = await call('GET', '/usage?granularity=day&instance_id=inst_never', { authorization: `Bearer ${owner.api_key}` });
    expect(none).toMatchObject({ status: 200, body: { instance_id: 'inst_never' } });
    expect((none.body.data as { messages: number }[]).every((d) => d.messages === 0)).toBe(true);
    expect(await call('GET', '/usage?instance_id=not-a-number', { authorization: `Bearer ${owner.api_key}` })).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
    await shot(page, 'usage');
    await expectAccessible(page, 'usage');
    await page.getByRole('tab', { name: 'Webhooks' }).click();
    await page.getByText(/No webhook yet/).waitFor();
    await expectAccessible(page, 'webhooks');

    // The team: a person added, then removed after a question; the admin cannot remove themself.
    await page.getByRole('tab', { name: 'Team' }).click();
    await page.locator(`tr[data-user="${mail('owner')}"]`).getByText('you').waitFor();
    const add = page.getByRole('form', { name: 'Add a person' });
    await add.getByLabel('E-mail').fill(mail('newcomer'));
    await add.getByLabel('Role').selectOption('admin');
    await add.getByRole('button', { name: 'Add' }).click();
    const newcomer = page.locator(`tr[data-user="${mail('newcomer')}"]`);
    await newcomer.getByRole('cell', { name: 'admin', exact: true }).waitFor();
    await expectAccessible(page, 'team');
    await newcomer.getByRole('button', { name: 'Remove' }).click();
    await answer(page, /^Remove /, 'Remove');
    await newcomer.waitFor({ state: 'detached' });
    await waitFor('the person removed', async () => {
      const users = (await call('GET', '/users', { authorization: `Bearer ${owner.api_key}` })).body.data as { email: string }[];
      return !users.some((u) => u.email === mail('newcomer')) || undefined;
    }, { timeoutMs: 15_000 });
    await context.close();
  });

  it('shows a member what a member may see, and refuses their writes', async () => {
    const shot = screenshots('panel-member');
    await connectedApp('panel-app-2');
    const { context, page } = await signIn(mail('member'), shot);
    await page.getByText('you are a member').waitFor();
    await page.locator('li[data-app="Loja Parceira"]').waitFor();
    expect(await page.getByRole('button', { name: 'Disconnect' }).count()).toBe(0);
    await page.getByRole('tab', { name: 'API keys' }).click();
    await page.getByText('Only an admin of the account manages its keys.').waitFor();
    await shot(page, 'member-keys');
    await expectAccessible(page, 'member keys');
    await page.getByRole('tab', { name: 'Team' }).click();
    await page.getByText('Only an admin of the account manages its people.').waitFor();
    const cookie = (await context.cookies()).find((c) => c.name === 'gw_panel')!;
    const csrf = (await call('GET', '/panel/me', { cookie: `gw_panel=${cookie.value}` })).body.csrf_token as string;
    expect(await call('POST', '/keys', { cookie: `gw_panel=${cookie.value}`, 'x-csrf-token': csrf }, { role: 'agent' })).toMatchObject({ status: 403, body: { code: 'forbidden' } });
    expect(await call('GET', '/instances', { cookie: `gw_panel=${cookie.value}` })).toMatchObject({ status: 200 });
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('E-mail').waitFor();
    expect(await call('GET', '/instances', { cookie: `gw_panel=${cookie.value}` })).toMatchObject({ status: 401 });
    await context.close();
  });

  it("shows a partner webhook's deliveries with why they failed, and redelivers one", async () => {
    const shot = screenshots('panel-partner-deliveries');
    const { context, page } = await signIn(mail('ops'), shot);
    const row = page.locator(`tr[data-partner="loja-${env.id}"]`);
    // The connections of the tests above told the partner (at its loopback webhook URL, which answers nothing).
    // Newest first: the newest may not have been attempted yet, so any delivery with its reason will do.
    const deliveries = page.locator('[data-partner-deliveries] tr[data-delivery]');
    let failed = deliveries.first();
    await waitFor('a delivery to the partner with its reason', async () => {
      await row.getByRole('button', { name: 'Deliveries' }).click();
      await deliveries.first().waitFor({ timeout: 5_000 }).catch(() => undefined);
      const at = (await deliveries.locator('td:nth-child(6)').allInnerTexts()).findIndex((reason) => !reason.startsWith('—'));
      if (at >= 0) failed = deliveries.nth(at);
      else await row.getByRole('button', { name: 'Deliveries' }).click();
      return at >= 0 || undefined;
    }, { timeoutMs: 60_000 });
    await expectAccessible(page, 'partner deliveries');
    await failed.getByRole('button', { name: 'Redeliver' }).click();
    const queued = await page.getByRole('status').filter({ hasText: 'Queued again as' }).innerText();
    expect(queued).toMatch(/dlv_/);
    await shot(page, 'partner-deliveries');
    await context.close();
  });

  it("speaks the browser's language, switches to another and keeps it, and shows a partner's usage on dated axes", async () => {
    const shot = screenshots('panel-locale');
    const context = await browser.newContext({ locale: 'pt-BR' });
    const page = await context.newPage();
    await page.goto(`${base}/panel`);
    await page.getByRole('heading', { name: 'Entrar' }).waitFor();
    expect(await page.locator('html').getAttribute('lang')).toBe('pt');
    expect(await page.title()).toBe('Painel do Gateway');
    await expectAccessible(page, 'sign-in in Portuguese');
    await page.getByLabel('Idioma').selectOption('de');
    await page.getByRole('heading', { name: 'Anmelden' }).waitFor();
    await page.reload();
    await page.getByRole('heading', { name: 'Anmelden' }).waitFor();
    expect(await page.locator('html').getAttribute('lang')).toBe('de');

    const email = mail('ops');
    await page.getByLabel('E-Mail').fill(email);
    const before = (await readMailbox(email)).length;
    await page.getByRole('button', { name: 'Code senden' }).click();
    await page.getByLabel('Code').waitFor();
    const code = await waitFor('the sign-in code', async () => {
      const box = await readMailbox(email);
      return box.length > before ? /\b(\d{6})\b/.exec(box[box.length - 1]!.text)?.[1] : undefined;
    }, { timeoutMs: 20_000 });
    await page.getByLabel('Code').fill(code);
    await page.getByRole('button', { name: 'Anmelden' }).click();
    await page.getByRole('button', { name: 'Abmelden' }).waitFor();
    await page.getByRole('heading', { name: 'Plattformverwaltung' }).waitFor();
    await page.getByLabel('Partner durchsuchen').waitFor();

    // The partner's connected account (the member's test linked one) sent one message in the account's test.
    const row = page.locator(`tr[data-partner="loja-${env.id}"]`);
    await row.getByRole('cell', { name: 'aktiv', exact: true }).waitFor();
    const usage = page.locator('[data-partner-usage]');
    await waitFor("the partner's send in its chart", async () => {
      await row.getByRole('button', { name: 'Nutzung' }).click();
      await usage.getByRole('img', { name: /Nachrichten pro Tag/ }).waitFor();
      const total = await usage.locator('[data-total]').getAttribute('data-total');
      if (total !== '1') await row.getByRole('button', { name: 'Nutzung' }).click();
      return total === '1' || undefined;
    }, { timeoutMs: 30_000 });
    expect(await usage.locator('svg.chart rect').count()).toBe(30);
    const today = new Date().toISOString().slice(0, 10);
    expect(await usage.locator(`svg.chart rect[data-day="${today}"]`).getAttribute('data-messages')).toBe('1');
    const germanDay = new Intl.DateTimeFormat('de', { month: 'short', day: 'numeric', timeZone: 'UTC' }).format(new Date(`${today}T00:00:00Z`));
    expect(await usage.locator(`[data-axis-day="${today}"]`).textContent()).toBe(germanDay);
    await shot(page, 'partner-usage-de');
    await expectAccessible(page, 'partner usage in German');

    // The route: the partner's usage, a partner that does not exist, a backwards range, no platform credential.
    const cookie = (await context.cookies()).find((c) => c.name === 'gw_panel')!;
    const headers = { cookie: `gw_panel=${cookie.value}` };
    const read = await call('GET', `/platform/partners/${partnerId}/usage?from=${today}`, headers);
    expect(read).toMatchObject({ status: 200, body: { partner_id: partnerId, connections: 1, granularity: 'day', data: [{ period_start: today, messages: 1 }] } });
    expect(await call('GET', '/platform/partners/ptn_nobody/usage', headers)).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect(await call('GET', `/platform/partners/${partnerId}/usage?from=${today}&to=2020-01-01`, headers)).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
    expect([401, 403]).toContain((await call('GET', `/platform/partners/${partnerId}/usage`, { authorization: `Bearer ${owner.api_key}` })).status);
    await context.close();
  });
});
