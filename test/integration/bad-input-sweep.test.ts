import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { gzipSync } from 'node:zlib';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../processors/config/accounts.js';
import { IMPORT_BODY_LIMIT, TEXT_BODY_LIMIT, DEFAULT_BODY_LIMIT } from '../../api/body-limits.js';
import { isErrorCode, isLocale } from '../../api/errors.js';
import { MAX_JSON_DEPTH } from '../../api/json-depth.js';
import { instancesProjection, runProjection, waitUntilCaughtUp, type RunningProjection } from '../../processors/index.js';
import { asAccountId, asEventId, asInstanceId, asProjectId, newId } from '../../schemas/ids.js';
import type { InstanceState } from '../../schemas/records.js';
import { startApi, type RunningApi } from '../../stack/api-role.js';
import type { Clients } from '../../stack/clients.js';
import { deliveryRetryTier, endOffsets, topicName, topics } from '../../topics/index.js';
import { testClients } from '../support/clients.js';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { partnerRecord } from '../support/partner-records.js';
import { createPlatformAdmin } from '../../processors/config/platform-admins.js';
import { hashSecret } from '../../shared/secret-token.js';
import { canSignIn } from '../support/sign-in.js';

/**
 * Bad input, for every operation `/openapi.json` lists: wrong types, missing fields, NUL, lone
 * surrogates, strings over their limit, bodies over theirs, bodies nested thousands deep, `%00`,
 * 10 KB and invalid UTF-8 in paths and queries, refused content types, charsets and encodings.
 * Every answer must be a 4xx carrying exactly the error object, no connection may drop, and
 * nothing may reach the log. And each operation, called without any credential, answers as the
 * security the document declares for it.
 */

interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
  pattern?: string;
  format?: string;
  maxLength?: number;
  minLength?: number;
  minimum?: number;
  minItems?: number;
  examples?: unknown[];
}

/** The credentials an operation takes, any one of them (OpenAPI's `security`); `[]`: none. */
type Security = readonly Readonly<Record<string, readonly string[]>>[];

interface Operation {
  readonly method: string;
  readonly path: string;
  readonly pathParams: readonly string[];
  readonly query: readonly string[];
  readonly body: Schema | undefined;
  readonly security: Security | undefined;
}

interface Probe {
  readonly what: string;
  readonly method: string;
  /** Path and query, already percent-encoded (or raw bytes, for `raw` probes). */
  readonly url: string;
  readonly headers?: Record<string, string>;
  readonly body?: string | Buffer;
  /** Sent on a socket of its own, as bytes: for what an HTTP client would refuse to send. */
  readonly raw?: Buffer;
  /** The route checks these rows itself: 200 with every row invalid is a right answer too. */
  readonly rowsChecked?: boolean;
  /** The one status the answer must have, where any 4xx would not do. */
  readonly status?: number;
}

interface Answer {
  readonly probe: Probe;
  /** 0: the connection dropped without an answer. */
  readonly status: number;
  readonly body: string;
}

const NUL = 'a\u0000b';
const LONE = 'x\ud800y';
const TEN_KB = 'a'.repeat(10 * 1024);
const MEDIA_SENDS = new Set(['/messages/image', '/messages/video', '/messages/document', '/messages/audio', '/messages/sticker']);

/**
 * Bodies nested far deeper than any schema, within the route's body limit (a deeper one is 413):
 * refused before anything walks them, never a stack overflow answered 500.
 */
function deeplyNested(limit: number | undefined): [label: string, body: string][] {
  const bodies: [string, string][] = [];
  for (const depth of [5_000, 100_000]) {
    bodies.push([`${depth} arrays deep`, '['.repeat(depth) + ']'.repeat(depth)], [`${depth} objects deep`, '{"":'.repeat(depth) + '1' + '}'.repeat(depth)]);
  }
  return bodies.filter(([, body]) => limit === undefined || body.length <= limit);
}

/**
 * What an operation answers without its credential, by security scheme. Header and cookie
 * credentials answer 401 with their own code; a signature the request must carry (a media link's
 * `sig`, Stripe's `Stripe-Signature`) is a required part of it, refused as invalid (400).
 */
const refusalWithout: Readonly<Record<string, { status: number; code: string }>> = {
  apiKey: { status: 401, code: 'unauthorized' },
  panelSession: { status: 401, code: 'unauthorized' },
  platformAdmin: { status: 401, code: 'unauthorized' },
  partnerSecret: { status: 401, code: 'partner_unauthorized' },
  connectSession: { status: 401, code: 'connect_session_required' },
  metricsToken: { status: 401, code: 'metrics_unauthorized' },
  mediaSignature: { status: 400, code: 'invalid_request' },
  stripeSignature: { status: 400, code: 'invalid_request' },
};

/** Record counts on the topics a request could write to. */
const writeTopics = [topics.sendCommands, topics.config, topics.instances, topics.contacts, topics.audience, topics.sandboxCommands, deliveryRetryTier(10_000)];

function typesOf(schema: Schema): Set<string> | undefined {
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches) {
    const all = new Set<string>();
    for (const branch of branches) {
      const types = typesOf(branch);
      if (types === undefined) return undefined;
      types.forEach((t) => all.add(t));
    }
    return all;
  }
  if (schema.const !== undefined || schema.enum !== undefined) {
    return new Set((schema.enum ?? [schema.const]).map((v) => (v === null ? 'null' : typeof v)));
  }
  if (schema.type === undefined) return undefined;
  const types = new Set(Array.isArray(schema.type) ? schema.type : [schema.type]);
  if (types.has('integer')) types.add('number');
  return types;
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value === 'number' ? 'number' : typeof value;
}

describe('a bad-input sweep over every operation of the API', () => {
  let env: TestEnv;
  let clients: Clients;
  let api: RunningApi;
  let instances: RunningProjection;
  let base: string;
  let port: number;
  let agent: Agent;
  let auth: Record<string, string>;
  /** The credential of each surface (spec 5): partner secret, platform credential, component session; else the API key. */
  const surfaces: [prefix: string, headers: Record<string, string>][] = [];
  let probeCount = 0;
  const nextAddress = () => {
    const n = ++probeCount;
    return `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
  };
  const authFor = (url: string): Record<string, string> => surfaces.find(([prefix]) => url.startsWith(prefix))?.[1] ?? auth;
  const ids = { instance: '', webhook: '', pool: '', key: '' };
  let operations: Operation[] = [];

  /** A plausible value: good enough that each probe's one bad part is what gets refused. */
  function sample(schema: Schema, name: string): unknown {
    if (schema.examples?.[0] !== undefined) return schema.examples[0];
    if (schema.const !== undefined) return schema.const;
    if (schema.enum) return schema.enum[0];
    const branches = schema.anyOf ?? schema.oneOf;
    if (branches) return sample(branches.find((b) => b.type !== 'null') ?? branches[0]!, name);
    const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
    switch (type) {
      case 'object': {
        const out: Record<string, unknown> = {};
        for (const field of schema.required ?? []) out[field] = sample(schema.properties?.[field] ?? {}, field);
        return out;
      }
      case 'array':
        return Array.from({ length: schema.minItems ?? 0 }, (_, i) => `${String(sample(schema.items ?? {}, name))}${i === 0 ? '' : i}`);
      case 'integer':
      case 'number':
        return schema.minimum ?? 0;
      case 'boolean':
        return false;
      case 'null':
        return null;
      case 'string':
        return sampleString(schema, name);
      default:
        return 'x';
    }
  }

  function sampleString(schema: Schema, name: string): string {
    const pattern = schema.pattern ?? '';
    if (pattern.includes('\\+[1-9]')) return '+5511999990001';
    if (pattern.includes('@lid')) return '81234567890123@lid';
    if (pattern.includes('@g\\.us')) return '120363000000000001@g.us';
    if (pattern.startsWith('^BEGIN:VCARD')) return 'BEGIN:VCARD\nFN:A\nEND:VCARD';
    if (pattern.includes('A-Za-z0-9]{4,12}')) return '123456';
    if (schema.format === 'uri' || name === 'url') return 'https://example.com/hook';
    if (schema.format === 'date') return '2026-01-01';
    if (schema.format === 'date-time') return '2026-01-01T00:00:00Z';
    if (schema.format === 'uuid') return randomUUID();
    if (name === 'instance_id' || name === 'instance_ids') return ids.instance;
    if (name === 'event_type') return 'message.received';
    if (name === 'mimetype') return 'image/png';
    return 'x'.repeat(Math.max(1, schema.minLength ?? 1));
  }

  function idFor(path: string, param: string): string {
    if (param === 'jid') return '+5511999990001';
    if (param === 'delivery_id') return 'dlv_none';
    if (path.startsWith('/media/')) return randomUUID();
    if (path.startsWith('/webhooks/')) return ids.webhook;
    if (path.startsWith('/pools/')) return ids.pool;
    if (path.startsWith('/keys/')) return ids.key;
    if (path.startsWith('/contacts/')) return 'ct_none';
    return ids.instance;
  }

  function urlOf(op: Operation, params: Record<string, string> = {}, query = ''): string {
    const path = op.path.replace(/\{(\w+)\}/g, (_m, name: string) => params[name] ?? encodeURIComponent(idFor(op.path, name)));
    return query === '' ? path : `${path}?${query}`;
  }

  const json = (value: unknown) => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(value) });

  /** Each body field (nested objects too) replaced by what it must refuse. */
  function bodyProbes(op: Operation, schema: Schema, body: Record<string, unknown>, at: string[] = []): Probe[] {
    const probes: Probe[] = [];
    const url = urlOf(op);
    const withValue = (field: string, value: unknown): unknown => {
      const copy = structuredClone(body);
      let target: Record<string, unknown> = copy;
      for (const step of at) target = target[step] as Record<string, unknown>;
      target[field] = value;
      return copy;
    };
    const rowsChecked = op.path === '/contacts/import' && at[0] === 'rows';
    for (const [field, fieldSchema] of Object.entries(schema.properties ?? {})) {
      const name = [...at, field].join('/');
      const types = typesOf(fieldSchema);
      if (types !== undefined) {
        for (const wrong of [12345, ['x'], { a: 1 }, null, true, 'text']) {
          if (!types.has(jsonType(wrong))) probes.push({ what: `body/${name} = ${JSON.stringify(wrong)}`, method: op.method, url, ...json(withValue(field, wrong)) });
        }
      }
      if (types?.has('string')) {
        for (const [label, text] of [['NUL', NUL], ['lone surrogate', LONE]] as const) {
          probes.push({ what: `body/${name} with ${label}`, method: op.method, url, ...json(withValue(field, text)), rowsChecked });
        }
        if (fieldSchema.maxLength !== undefined) {
          probes.push({ what: `body/${name} over ${fieldSchema.maxLength}`, method: op.method, url, ...json(withValue(field, 'x'.repeat(fieldSchema.maxLength + 1))) });
        }
      }
      const item = fieldSchema.items?.type === 'object' ? fieldSchema.items : undefined;
      if (fieldSchema.type === 'object' || item !== undefined) {
        // Nested objects, and the first item of an array of objects, are probed field by field too.
        const inner = sample(item ?? fieldSchema, field);
        const parent = withValue(field, item === undefined ? inner : [inner]) as Record<string, unknown>;
        probes.push(...bodyProbes(op, item ?? fieldSchema, parent, item === undefined ? [...at, field] : [...at, field, '0']));
      }
    }
    for (const field of schema.required ?? []) {
      const copy = structuredClone(body);
      let target: Record<string, unknown> = copy;
      for (const step of at) target = target[step] as Record<string, unknown>;
      delete target[field];
      probes.push({ what: `body/${[...at, field].join('/')} missing`, method: op.method, url, ...json(copy) });
    }
    return probes;
  }

  function bodyLimitOf(path: string): number | undefined {
    if (MEDIA_SENDS.has(path)) return undefined; // 96 MiB: the raw probe below covers it without sending it
    if (path === '/contacts/import') return IMPORT_BODY_LIMIT;
    if (path.startsWith('/messages/') || path.endsWith('-messages')) return TEXT_BODY_LIMIT;
    return DEFAULT_BODY_LIMIT;
  }

  function probesOf(op: Operation): Probe[] {
    const probes: Probe[] = [];
    for (const param of op.pathParams) {
      for (const [label, value] of [['%00', 'abc%00def'], ['10 KB', TEN_KB], ['invalid UTF-8', '%C3%28'], ['encoded surrogate', '%ED%A0%80']] as const) {
        probes.push({ what: `params/${param} ${label}`, method: op.method, url: urlOf(op, { [param]: value }) });
      }
      const raw = urlOf(op, { [param]: '\u00ff\u00fe' });
      probes.push({ what: `params/${param} raw invalid UTF-8 bytes`, method: op.method, url: raw, raw: Buffer.from(`${op.method} ${raw} HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth.authorization}\r\nConnection: close\r\n\r\n`, 'latin1') });
    }
    for (const name of op.query) {
      for (const [label, value] of [['%00', 'a%00b'], ['10 KB', TEN_KB], ['lone surrogate', '%ED%A0%80'], ['invalid UTF-8', '%C3%28']] as const) {
        probes.push({ what: `querystring/${name} ${label}`, method: op.method, url: urlOf(op, {}, `${name}=${value}`) });
      }
    }
    if (op.body !== undefined) {
      const body = sample(op.body, 'body') as Record<string, unknown>;
      const url = urlOf(op);
      probes.push(...bodyProbes(op, op.body, body));
      const text = JSON.stringify(body);
      probes.push(
        { what: 'text/plain body', method: op.method, url, headers: { 'content-type': 'text/plain' }, body: text },
        { what: 'xml body', method: op.method, url, headers: { 'content-type': 'application/xml' }, body: '<a/>' },
        { what: 'utf-16 body', method: op.method, url, headers: { 'content-type': 'application/json; charset=utf-16' }, body: Buffer.from(text, 'utf16le') },
        { what: 'latin1 charset', method: op.method, url, headers: { 'content-type': 'application/json; charset=iso-8859-1' }, body: text },
        { what: 'false gzip', method: op.method, url, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: text },
        { what: 'real gzip', method: op.method, url, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: gzipSync(text) },
        { what: 'not JSON', method: op.method, url, headers: { 'content-type': 'application/json' }, body: '{"to": ' },
        { what: 'a JSON array', method: op.method, url, ...json([body]) },
        { what: 'an extra property', method: op.method, url, ...json({ ...body, unexpected_field: 'x' }) },
      );
      const limit = bodyLimitOf(op.path);
      for (const [label, nested] of deeplyNested(limit)) {
        probes.push({ what: `a body ${label}`, method: op.method, url, headers: { 'content-type': 'application/json' }, body: nested, status: 400 });
      }
      if (limit !== undefined) {
        probes.push({ what: `body over ${limit} bytes`, method: op.method, url, ...json({ ...body, pad: 'x'.repeat(limit) }) });
      }
      probes.push({
        what: 'declared length over every limit',
        method: op.method,
        url,
        raw: Buffer.from(`${op.method} ${url} HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth.authorization}\r\nContent-Type: application/json\r\nContent-Length: ${200 * 1024 * 1024}\r\nConnection: close\r\n\r\n{"to":`),
      });
    }
    return probes;
  }

  async function send(probe: Probe): Promise<Answer> {
    if (probe.raw) return sendRaw(probe);
    try {
      const response = await request(`${base}${probe.url}`, {
        method: probe.method as 'GET',
        // Each probe from its own address: public routes are limited per IP, and the sweep is no flood.
        headers: { ...authFor(probe.url), 'x-forwarded-for': nextAddress(), ...probe.headers },
        body: probe.body,
        dispatcher: agent,
        headersTimeout: 15_000,
        bodyTimeout: 15_000,
      });
      return { probe, status: response.statusCode, body: await response.body.text() };
    } catch (error) {
      return { probe, status: 0, body: String(error) };
    }
  }

  function sendRaw(probe: Probe): Promise<Answer> {
    return new Promise((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      const chunks: Buffer[] = [];
      socket.setTimeout(15_000, () => socket.destroy());
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      socket.on('error', () => undefined);
      socket.on('close', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
        resolve({ probe, status, body: text.slice(text.indexOf('\r\n\r\n') + 4) });
      });
      socket.write(probe.raw!);
    });
  }

  async function sendAll(probes: readonly Probe[], concurrency = 8): Promise<Answer[]> {
    const answers: Answer[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < probes.length) answers.push(await sendPolitely(probes[next++]!));
      }),
    );
    return answers;
  }

  /**
   * Sends a probe again a second later (the `Retry-After` of a 429) while the key's rate limit refuses it, as a client
   * should: on a fast machine the sweep outruns the scale plan's 1,000 requests a second, and a
   * refused probe tests nothing. Bad input writes nothing, so sending it again is safe.
   */
  async function sendPolitely(probe: Probe): Promise<Answer> {
    let answer = await send(probe);
    for (let retries = 0; answer.status === 429 && probe.status !== 429 && retries < 5; retries++) {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      answer = await send(probe);
    }
    return answer;
  }

  /** What is wrong with an answer to bad input, if anything. */
  function problemOf(answer: Answer): string | undefined {
    const { status, body, probe } = answer;
    if (status === 0) return 'connection dropped';
    if (probe.rowsChecked && status === 200) {
      const result = JSON.parse(body) as { created: number; updated: number; invalid: number };
      return result.created === 0 && result.updated === 0 && result.invalid > 0 ? undefined : `rows written: ${body}`;
    }
    if (status < 400 || status >= 500) return `status ${status}: ${body.slice(0, 200)}`;
    if (probe.status !== undefined && status !== probe.status) return `status ${status}, not ${probe.status}: ${body.slice(0, 200)}`;
    if (status === 429) return 'rate limited: the sweep tested nothing';
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return `status ${status} without a JSON body: ${body.slice(0, 200)}`;
    }
    const error = parsed as Record<string, unknown>;
    if (Object.keys(error).sort().join() !== 'code,locale,message') return `not the error object: ${body.slice(0, 200)}`;
    if (!isErrorCode(error.code) || typeof error.message !== 'string' || typeof error.locale !== 'string' || !isLocale(error.locale)) {
      return `not a catalogue error: ${body.slice(0, 200)}`;
    }
    if (body.includes('FST_')) return `a framework code in the body: ${body}`;
    return undefined;
  }

  async function recordsWritten(): Promise<number> {
    let total = 0;
    for (const topic of writeTopics) {
      for (const offset of (await endOffsets(clients.kafka, topicName(topic, clients.serdes.prefix))).values()) total += offset;
    }
    return total;
  }

  const call = async (method: string, url: string, body?: unknown) => {
    const response = await request(`${base}${url}`, {
      method: method as 'GET',
      headers: { ...authFor(url), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      dispatcher: agent,
    });
    return { status: response.statusCode, body: (await response.body.json().catch(() => undefined)) as Record<string, unknown> };
  };

  beforeAll(async () => {
    // Each probe comes from its own address (X-Forwarded-For), so per-IP buckets do not turn probes into 429s.
    env = await createTestEnv({ TRUST_PROXY: 'loopback' });
    clients = await testClients(env);
    instances = await runProjection(clients, instancesProjection);
    api = await startApi(clients, { listen: false });
    await api.app.listen({ host: '127.0.0.1', port: 0 });
    const address = api.app.server.address();
    port = typeof address === 'object' && address !== null ? address.port : 0;
    base = `http://127.0.0.1:${port}`;
    agent = new Agent({ connections: 16 });

    // The scale plan: its rate limit (1000/s) lets the sweep through.
    const account = await createAccount(clients.producer, { name: 'Sweep', email: 'sweep@acme.test', plan: 'scale' }, async () => undefined);
    await api.directory.until(() => canSignIn(api.directory, account.account_id));
    auth = { authorization: `Bearer ${account.api_key}` };
    const partnerSecret = `svc_partner_${randomUUID().replaceAll('-', '')}`;
    const partnerId = newId('ptn');
    await clients.producer.send(topics.config, [{ key: partnerId, value: partnerRecord(partnerId, { secret_hash: hashSecret(partnerSecret), allowed_origins: ['https://app.sweep.example'] }) }]);
    const admin = await createPlatformAdmin(clients.producer, 'sweep@platform.test');
    await api.directory.until(() => api.directory.partners.has(partnerId) && api.directory.platformAdmins.has(admin.id));
    surfaces.push(['/partner/', { authorization: `Bearer ${partnerSecret}` }], ['/platform/', { authorization: `Bearer ${admin.credential}` }]);
    const session = await call('POST', '/partner/connect-sessions', { external_id: 'sweep', customer: { name: 'Sweep', email: 'sweep-customer@acme.test' } });
    expect(session.status).toBe(201);
    surfaces.push(['/connect/', { 'x-connect-session': String(session.body.session_token), origin: 'https://app.sweep.example' }]);
    ids.key = api.directory.keysOf(account.account_id)[0]!.id;

    ids.instance = newId('inst');
    const state: InstanceState = {
      event_id: asEventId(newId('evt')), occurred_at: Date.now(), account_id: asAccountId(account.account_id),
      project_id: asProjectId(account.project_id), instance_id: asInstanceId(ids.instance), phone: '+5511900000000', nickname: 'Sweep',
      status: 'connected', previous_status: null, reason: null, health_score: 100, pool_ids: [], connector: 'sandbox', deleted: false,
    };
    await clients.producer.send(topics.instances, [{ key: ids.instance, value: state }]);
    await waitUntilCaughtUp(clients, 'instances', [topicName(topics.instances, clients.serdes.prefix)], Date.now() + 20_000);

    const webhook = await call('POST', '/webhooks', { url: 'https://example.com/hook', event_types: ['message.received'] });
    expect(webhook.status).toBe(201);
    ids.webhook = String(webhook.body.id);
    const pool = await call('POST', '/pools', { name: 'Sweep', instance_ids: [ids.instance] });
    expect(pool.status).toBe(201);
    ids.pool = String(pool.body.id);

    const document = (await (await request(`${base}/openapi.json`, { dispatcher: agent })).body.json()) as {
      paths: Record<string, Record<string, { parameters?: { in: string; name: string }[]; requestBody?: { content?: Record<string, { schema: Schema }> }; security?: Security }>>;
      security?: Security;
    };
    operations = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({
        method: method.toUpperCase(),
        path,
        pathParams: (operation.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name),
        query: (operation.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
        body: operation.requestBody?.content?.['application/json']?.schema,
        // An operation's own security, else the document's (OpenAPI's rule).
        security: operation.security ?? document.security,
      })),
    );
  });

  afterAll(async () => {
    await agent?.close();
    await api?.stop();
    await instances?.stop();
    await clients?.close();
    await env?.dispose();
  });

  it('answers every bad input of every operation with a 4xx error object, and writes nothing', async () => {
    expect(operations.length).toBeGreaterThan(40);
    const probes = operations.flatMap((op) => probesOf(op).map((probe) => ({ ...probe, what: `${op.method} ${op.path}: ${probe.what}` })));
    probes.push(
      { what: 'a malformed header line', method: 'GET', url: '/instances', raw: Buffer.from('GET /instances HTTP/1.1\r\nHost: x\r\nNot a header\r\n\r\n') },
      { what: 'an unknown route with %00', method: 'GET', url: '/nowhere%00' },
    );
    const before = await recordsWritten();
    const started = Date.now();
    const answers = await sendAll(probes);
    const took = Date.now() - started;

    const problems = answers.flatMap((answer) => {
      const problem = problemOf(answer);
      return problem === undefined ? [] : [`${answer.probe.what}: ${problem}`];
    });
    expect(problems).toEqual([]);
    expect(await recordsWritten()).toBe(before);
    expect(answers.length).toBe(probes.length);
    expect(took).toBeLessThan(60_000);
    console.log(`bad-input sweep: ${operations.length} operations, ${probes.length} probes in ${took} ms`);
  });

  it('declares for every operation the credential it answers without', async () => {
    const answers = await Promise.all(
      operations.map(async (op) => {
        // No Authorization, X-Connect-Session nor cookie; an address of its own for the per-IP limit.
        const response = await request(`${base}${urlOf(op)}`, { method: op.method as 'GET', headers: { 'x-forwarded-for': nextAddress() }, dispatcher: agent });
        const text = await response.body.text();
        return { op, status: response.statusCode, code: (JSON.parse(text.startsWith('{') ? text : '{}') as { code?: string }).code };
      }),
    );
    const mismatches = answers.flatMap(({ op, status, code }) => {
      const name = `${op.method} ${op.path}`;
      if (op.security === undefined) return [`${name}: no security declared`];
      if (status >= 500 || status === 429) return [`${name}: ${status} ${code}`];
      if (op.security.length === 0) return status === 401 ? [`${name}: declared public, answers 401 ${code}`] : [];
      const expected = op.security.flatMap((requirement) => Object.keys(requirement).map((scheme) => refusalWithout[scheme]));
      const refused = expected.some((refusal) => refusal !== undefined && refusal.status === status && refusal.code === code);
      return refused ? [] : [`${name}: declares ${JSON.stringify(op.security)}, answers ${status} ${code} without it`];
    });
    expect(mismatches).toEqual([]);
    const declared = (path: string, method = 'get') => operations.find((op) => op.path === path && op.method === method.toUpperCase())?.security;
    expect(declared('/panel/login', 'post')).toEqual([]);
    expect(declared('/panel/logout', 'post')).toEqual([]);
    expect(declared('/metrics')).toEqual([{ metricsToken: [] }]);
    expect(declared('/instances')).toEqual([{ apiKey: [] }, { panelSession: [] }]);
  });

  it('names the field, and answers the framework errors with the catalogue codes', async () => {
    const text = await send({ what: '', method: 'POST', url: '/messages/text', ...json({ to: '+5511999990001', body: 12345 }) });
    expect(text.status).toBe(400);
    const errorOf = (answer: Answer) => JSON.parse(answer.body) as { code: string; message: string };
    expect(errorOf(text).code).toBe('invalid_request');
    expect(errorOf(text).message).toContain('body/body');
    const nul = await send({ what: '', method: 'GET', url: '/contacts?q=a%00b' });
    expect(errorOf(nul).message).toContain('querystring/q');
    const id = await send({ what: '', method: 'DELETE', url: '/instances/abc%00def' });
    expect(errorOf(id).message).toContain('params/id');
    const long = await send({ what: '', method: 'DELETE', url: `/instances/${TEN_KB}` });
    expect(long.status).toBe(414);
    const media = await sendRaw({
      what: '', method: 'POST', url: '/messages/image',
      raw: Buffer.from(`POST /messages/image HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth.authorization}\r\nContent-Type: application/json\r\nContent-Length: ${200 * 1024 * 1024}\r\nConnection: close\r\n\r\n`),
    });
    expect(media.status).toBe(413);
    expect(JSON.parse(media.body)).toMatchObject({ code: 'media_too_large' });
    const gzip = await send({ what: '', method: 'POST', url: '/webhooks', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: '{}' });
    expect(gzip.status).toBe(415);
    const export_ = await send({ what: '', method: 'GET', url: '/contacts/export?q=a%00b' });
    expect(export_.status).toBe(400);
    const deep = await send({ what: '', method: 'POST', url: '/messages/text', ...json({ to: '+5511999990001', body: 'x', client_reference: JSON.parse('['.repeat(40) + ']'.repeat(40)) as unknown }) });
    expect(deep.status).toBe(400);
    expect(errorOf(deep).message).toContain(`more than ${MAX_JSON_DEPTH} levels deep`);
  });

  it('takes emoji and other well-formed text where a string is free text', async () => {
    const emoji = 'Zoë 👋🏽 日本 — ok';
    expect((await call('POST', '/messages/text', { to: '+5511999990001', body: emoji, client_reference: emoji })).status).toBe(202);
    expect((await call('POST', '/instances', { nickname: emoji })).status).toBe(202);
    expect((await call('POST', '/pools', { name: emoji, instance_ids: [] })).status).toBe(201);
    expect((await call('POST', '/webhooks', { url: 'https://example.com/other', event_types: ['message.sent'], description: emoji })).status).toBe(201);
    expect((await call('POST', `/sandbox/instances/${ids.instance}/status`, { status: 'connected', reason: emoji })).status).toBe(202);
    const imported = await call('POST', '/contacts/import', { rows: [{ phone: '+5511999990002', name: emoji, tags: ['⭐'] }, { phone: '+5511999990003', name: NUL }] });
    expect(imported.status).toBe(200);
    expect(imported.body).toMatchObject({ created: 1, invalid: 1, invalid_rows: [{ index: 1, phone: '+5511999990003', reason: 'invalid_text' }] });
    expect((await call('POST', '/messages/image', { to: '+5511999990001', media: { base64: 'iVBORw0KGgo=', mimetype: 'audio/ogg; codecs=opus' } })).status).not.toBe(400);
  });
});
