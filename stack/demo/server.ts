import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import type { Directory } from '../../processors/directory.js';
import { asEventId, newId } from '../../schemas/ids.js';
import type { ConfigRecord } from '../../schemas/records.js';
import { hashSecret, secretToken } from '../../shared/secret-token.js';
import { topics, type Producer } from '../../topics/index.js';
import { demoCss, demoHtml, demoJs } from './page.js';

export interface DemoPartnerOptions {
  readonly host: string;
  /** 0: any free port. */
  readonly port: number;
  /** The API as the browser reaches it. */
  readonly apiBase: string;
  /** Where `v1/connect.js` is served. */
  readonly widgetUrl: string;
}

export interface DemoPartner {
  readonly url: string;
  readonly partnerId: string;
  /** The demo partner's secret, for this process only (tests act as the partner with it). */
  readonly secret: string;
  close(): Promise<void>;
}

const PARTNER_ID = 'ptn_demo';
const MAX_BODY = 8 * 1024;

/**
 * A partner's page on a port of its own (another origin than the API, as in production), for
 * walking the component on one machine: the demo partner is registered (again) at each start with
 * a fresh secret that stays in this process; its server opens sessions with it, its page opens the
 * component under a CSP that allows only what spec 4.6 lists.
 */
export async function startDemoPartner(deps: { producer: Producer; directory: Directory }, options: DemoPartnerOptions): Promise<DemoPartner> {
  const secret = secretToken('svc_partner_');
  const server: Server = createServer((req, res) => {
    void answer(req, secret, options).then(
      ({ status, type, body, headers }) => res.writeHead(status, { 'content-type': type, ...headers }).end(body),
      () => res.writeHead(500, { 'content-type': 'text/plain' }).end('demo partner failed'),
    );
  });
  await new Promise<void>((resolve) => server.listen(options.port, options.host, resolve));
  const port = (server.address() as AddressInfo).port;
  const url = `http://localhost:${port}`;
  const record: ConfigRecord = {
    event_id: asEventId(newId('cfg')),
    occurred_at: Date.now(),
    account_id: null,
    project_id: null,
    instance_id: null,
    entity_id: PARTNER_ID,
    entity: {
      kind: 'partner',
      slug: 'demo',
      name: 'Demo Partner',
      logo_url: null,
      allowed_origins: [url, `http://127.0.0.1:${port}`],
      webhook_url: null,
      key_scopes: ['instances:read', 'messages:send', 'messages:read'],
      secret_hash: hashSecret(secret),
      webhook_secret_ciphertext: null,
      active: true,
    },
  };
  await deps.producer.send(topics.config, [{ key: PARTNER_ID, value: record }]);
  await deps.directory.applied(PARTNER_ID, record.event_id, 15_000);
  return { url, partnerId: PARTNER_ID, secret, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

interface Answer {
  readonly status: number;
  readonly type: string;
  readonly body: string;
  readonly headers?: Record<string, string>;
}

async function answer(req: IncomingMessage, secret: string, options: DemoPartnerOptions): Promise<Answer> {
  const path = new URL(req.url ?? '/', 'http://demo').pathname;
  if (req.method === 'GET' && path === '/') return { status: 200, type: 'text/html; charset=utf-8', body: demoHtml(options.widgetUrl), headers: { 'content-security-policy': csp(options) } };
  if (req.method === 'GET' && path === '/demo.js') return { status: 200, type: 'text/javascript; charset=utf-8', body: demoJs };
  if (req.method === 'GET' && path === '/demo.css') return { status: 200, type: 'text/css; charset=utf-8', body: demoCss };
  if (req.method === 'POST' && path === '/session') return openSession(await bodyOf(req), secret, options.apiBase);
  return { status: 404, type: 'text/plain', body: 'not found' };
}

/** What the host page allows (spec 4.6), and nothing more: no inline script or style anywhere. */
function csp(options: DemoPartnerOptions): string {
  const widget = new URL(options.widgetUrl).origin;
  const api = new URL(options.apiBase).origin;
  return [
    "default-src 'none'",
    `script-src 'self' ${widget} https://js.stripe.com`,
    `connect-src 'self' ${api}`,
    `img-src ${api}`,
    "style-src 'self'",
    'frame-src https://js.stripe.com https://hooks.stripe.com',
    "base-uri 'none'",
    "form-action 'self'",
  ].join('; ');
}

async function openSession(form: Record<string, string>, secret: string, apiBase: string): Promise<Answer> {
  const customer = Object.fromEntries(
    Object.entries({ name: form.company, company: form.company, email: form.email, country: form.country, locale: form.locale }).filter(([, value]) => value),
  );
  const response = await request(`${apiBase}/partner/connect-sessions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ external_id: form.external_id || 'demo-customer-1', customer }),
  });
  const text = await response.body.text();
  const body = response.statusCode === 201 ? JSON.stringify({ ...(JSON.parse(text) as object), api_base: apiBase }) : text;
  return { status: response.statusCode, type: 'application/json', body };
}

async function bodyOf(req: IncomingMessage): Promise<Record<string, string>> {
  let text = '';
  for await (const chunk of req) {
    text += (chunk as Buffer).toString('utf8');
    if (text.length > MAX_BODY) break;
  }
  try {
    const parsed = JSON.parse(text) as unknown;
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, string>) : {};
  } catch {
    return {};
  }
}
