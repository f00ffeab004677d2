import { Writable } from 'node:stream';

import Fastify, { type FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';

import {
  ERRORS,
  GatewayError,
  LOCALES,
  errorBody,
  gatewayError,
  isErrorCode,
  renderTemplate,
  resolveLocale,
  type ErrorCode,
  type Locale,
} from '../../api/errors.js';
import { errorsPlugin } from '../../api/plugins/errors.js';

// The table of spec section 7, written out so that a code missing from the catalogue fails here.
// Rows the spec marks "not given" carry the status the gateway chose.
const SPEC_CODES: ReadonlyArray<readonly [string, number]> = [
  ['unauthorized', 401], // not given
  ['forbidden', 403],
  ['rate_limited', 429],
  ['not_connected', 409], // not given
  ['no_number_available', 409], // not given
  ['not_supported', 422], // not given
  ['media_too_large', 413], // not given
  ['idempotency_key_invalid', 400],
  ['idempotency_in_progress', 409],
  ['idempotency_key_reused', 422],
  ['event_taken', 409],
  ['partner_unauthorized', 401],
  ['partner_inactive', 403],
  ['external_id_required', 400],
  ['customer_email_required', 400],
  ['customer_name_required', 400],
  ['code_required', 400],
  ['invalid_code', 400],
  ['connect_session_required', 401],
  ['invalid_connect_session', 401],
  ['connect_session_expired', 401],
  ['origin_not_allowed', 403],
  ['connection_revoked', 409],
  ['account_required', 409],
  ['account_admin_required', 403],
  ['code_attempts_exceeded', 429],
  ['code_sends_exceeded', 429],
  ['account_not_found', 404],
  ['payment_required', 402],
  ['payment_pending', 409],
  ['already_paid', 409],
  ['method_unavailable', 422],
  ['payment_unavailable', 502],
  ['number_required', 409],
  ['quota_exceeded', 402],
  ['connection_not_found', 404],
  ['connection_not_active', 409],
  ['connect_suspended', 402],
  ['connect_revoked', 401],
];

const GATEWAY_CODES: ReadonlyArray<readonly [string, number]> = [
  ['invalid_request', 400],
  ['metrics_unauthorized', 401],
  ['not_found', 404],
  ['contact_opted_out', 422],
  ['campaign_state', 409],
  ['internal_error', 500],
  ['service_unavailable', 503],
];

const ALL_CODES = Object.keys(ERRORS) as ErrorCode[];
const PLACEHOLDER = /\{(\w+)\}/g;

function placeholders(template: string): string[] {
  return [...template.matchAll(PLACEHOLDER)].map((match) => match[1] ?? '').sort();
}

describe('error catalogue', () => {
  it.each(SPEC_CODES)('has spec code %s with status %i', (code, status) => {
    expect(isErrorCode(code)).toBe(true);
    if (isErrorCode(code)) expect(ERRORS[code].status).toBe(status);
  });

  it.each(GATEWAY_CODES)('has gateway code %s with status %i', (code, status) => {
    expect(isErrorCode(code)).toBe(true);
    if (isErrorCode(code)) expect(ERRORS[code].status).toBe(status);
  });

  it('holds no code beyond the spec and the few gateway codes', () => {
    const expected = [...SPEC_CODES, ...GATEWAY_CODES].map(([code]) => code).sort();
    expect([...ALL_CODES].sort()).toEqual(expected);
  });

  it.each(ALL_CODES)('%s has a message in every language, translated and with the same parameters', (code) => {
    const messages: Readonly<Record<Locale, string>> = ERRORS[code].message;
    const english = messages.en;
    for (const locale of LOCALES) {
      const message = messages[locale];
      expect(message.trim(), `${code}.${locale}`).not.toBe('');
      expect(placeholders(message), `${code}.${locale} parameters`).toEqual(placeholders(english));
      if (locale !== 'en') expect(message, `${code}.${locale} is an untranslated copy`).not.toBe(english);
    }
  });

  it('gives every message a distinct text within a language', () => {
    for (const locale of LOCALES) {
      const texts = ALL_CODES.map((code) => ERRORS[code].message[locale]);
      expect(new Set(texts).size, locale).toBe(texts.length);
    }
  });
});

describe('message parameters', () => {
  it('names the event in every language', () => {
    for (const locale of LOCALES) {
      const { message } = errorBody('event_taken', locale, { event: 'message.received' });
      expect(message, locale).toContain('message.received');
      expect(message, locale).not.toMatch(/[{}[\]]/);
    }
  });

  it('drops an optional segment when its parameter is missing', () => {
    expect(errorBody('event_taken', 'en').message).toBe(
      'The event already has a webhook in this project. Update that webhook or choose another event.',
    );
    expect(errorBody('invalid_request', 'en').message).toBe('The request is invalid. Fix it and send it again.');
    expect(errorBody('invalid_request', 'en', { detail: '' }).message).toBe(
      'The request is invalid. Fix it and send it again.',
    );
  });

  it('appends the validation detail to invalid_request', () => {
    expect(errorBody('invalid_request', 'en', { detail: 'body/name must be string' })).toEqual({
      code: 'invalid_request',
      message: 'The request is invalid: body/name must be string. Fix it and send it again.',
      locale: 'en',
    });
    expect(errorBody('media_too_large', 'de', { limit: '64 MiB' }).message).toContain('von 64 MiB');
  });

  it('never expands placeholders found inside a value', () => {
    const message = renderTemplate('[{a} and ]{b}', { a: '{b}[x]', b: 'B' });
    expect(message).toBe('{b}[x] and B');
  });

  it('strips control characters and caps the length of a value', () => {
    const message = errorBody('invalid_request', 'en', { detail: `a\nb\u0000c${'x'.repeat(500)}` }).message;
    expect(message.includes('\n') || message.includes('\u0000')).toBe(false);
    expect(message).toContain('a b c');
    expect(message.length).toBeLessThan(300);
  });

  it('reads only own properties of the parameters', () => {
    const inherited = Object.create({ event: 'inherited' }) as Record<string, string>;
    expect(renderTemplate('x[ {event}]', inherited)).toBe('x');
    expect(renderTemplate('x[ {constructor}]', {})).toBe('x');
  });
});

describe('resolveLocale', () => {
  it.each<[string | undefined, string | undefined, Locale]>([
    [undefined, undefined, 'en'],
    ['de', 'fr', 'de'],
    ['pt-BR', undefined, 'pt'],
    ['ja', 'es', 'es'],
    [undefined, 'pt-BR', 'pt'],
    [undefined, 'pt-BR,pt;q=0.9,en-US;q=0.8', 'pt'],
    [undefined, 'en;q=0.5, it;q=0.9', 'it'],
    [undefined, 'ja, fr-CH;q=0.7, de;q=0.6', 'fr'],
    [undefined, 'fr;q=0, de;q=0.1', 'de'],
    [undefined, 'FR-ca', 'fr'],
    [undefined, 'es;q=0.8, it;q=0.8', 'es'],
    [undefined, 'ja, zh-CN', 'en'],
    [undefined, '*', 'en'],
    [undefined, 'de;q=abc, it;q=0.2', 'it'],
    [undefined, '', 'en'],
  ])('(%j, %j) → %s', (preferred, acceptLanguage, expected) => {
    expect(resolveLocale(preferred, acceptLanguage)).toBe(expected);
  });
});

describe('GatewayError', () => {
  it('carries code, status, params, cause and an English message', () => {
    const cause = new Error('duplicate key');
    const error = gatewayError('event_taken', { event: 'message.sent' }, { cause });
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toBeInstanceOf(Error);
    expect(error.code).toBe('event_taken');
    expect(error.statusCode).toBe(409);
    expect(error.params).toEqual({ event: 'message.sent' });
    expect(error.cause).toBe(cause);
    expect(error.message).toContain('message.sent');
    expect(error.headers).toBeUndefined();
  });

  it('sets Retry-After: 1 on rate_limited by itself', () => {
    expect(gatewayError('rate_limited').headers).toEqual({ 'Retry-After': '1' });
    expect(gatewayError('code_sends_exceeded').headers).toBeUndefined();
  });
});

async function buildApp(logStream?: Writable): Promise<FastifyInstance> {
  const app = Fastify({ logger: logStream === undefined ? false : { level: 'error', stream: logStream } });
  await app.register(errorsPlugin);
  app.get('/limited', async () => {
    throw gatewayError('rate_limited');
  });
  app.get('/taken', async () => {
    throw gatewayError('event_taken', { event: 'message.read' });
  });
  app.get('/boom', async () => {
    throw new Error('password=hunter2 at db.internal:5432');
  });
  app.get('/text', async (_request, reply) => {
    reply.type('text/plain');
    throw gatewayError('forbidden');
  });
  app.get('/account-language', async (request) => {
    request.accountLocale = 'it';
    throw gatewayError('forbidden');
  });
  app.post(
    '/echo',
    {
      schema: {
        body: {
          type: 'object',
          required: ['name'],
          properties: { name: { type: 'string' }, note: { anyOf: [{ type: 'string' }, { type: 'null' }] } },
          additionalProperties: false,
        },
      },
    },
    async (request) => request.body,
  );
  await app.ready();
  return app;
}

describe('errors plugin', () => {
  it('answers a GatewayError with its status, headers and translated body', async () => {
    const app = await buildApp();
    const response = await app.inject({ method: 'GET', url: '/limited' });
    expect(response.statusCode).toBe(429);
    expect(response.headers['retry-after']).toBe('1');
    expect(Object.keys(response.headers).filter((name) => name.startsWith('x-ratelimit'))).toEqual([]);
    expect(response.headers['content-language']).toBe('en');
    expect(response.json()).toEqual(errorBody('rate_limited', 'en'));
    await app.close();
  });

  it('uses the Accept-Language of the client', async () => {
    const app = await buildApp();
    const response = await app.inject({ method: 'GET', url: '/taken', headers: { 'accept-language': 'de' } });
    expect(response.statusCode).toBe(409);
    expect(response.headers['content-language']).toBe('de');
    expect(response.json()).toEqual({
      code: 'event_taken',
      message:
        'Für das Ereignis message.read gibt es in diesem Projekt bereits einen Webhook. Aktualisieren Sie diesen Webhook oder wählen Sie ein anderes Ereignis.',
      locale: 'de',
    });
    await app.close();
  });

  it('prefers the account language over Accept-Language', async () => {
    const app = await buildApp();
    const response = await app.inject({
      method: 'GET',
      url: '/account-language',
      headers: { 'accept-language': 'de' },
    });
    expect(response.statusCode).toBe(403);
    expect(response.headers['content-language']).toBe('it');
    expect(response.json()).toEqual(errorBody('forbidden', 'it'));
    await app.close();
  });

  it('answers JSON even when the route had set another content type', async () => {
    const app = await buildApp();
    const response = await app.inject({ method: 'GET', url: '/text' });
    expect(response.statusCode).toBe(403);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.json()).toMatchObject({ code: 'forbidden' });
    await app.close();
  });

  it('names every type a union field takes, not the last branch tried', async () => {
    const app = await buildApp();
    const response = await app.inject({ method: 'POST', url: '/echo', payload: { name: 'Ana', note: { text: 'x' } } });
    expect(response.statusCode).toBe(400);
    expect(response.json<{ message: string }>().message).toBe('The request is invalid: body/note must be string or null. Fix it and send it again.');
  });

  it('answers a schema failure with 400 invalid_request and the first detail', async () => {
    const app = await buildApp();
    // Fastify's default Ajv coerces scalars, so a number would pass as a string; an object cannot.
    const response = await app.inject({ method: 'POST', url: '/echo', payload: { name: { first: 'Ana' } } });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({
      code: 'invalid_request',
      message: 'The request is invalid: body/name must be string. Fix it and send it again.',
      locale: 'en',
    });

    const missing = await app.inject({ method: 'POST', url: '/echo', payload: {} });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toMatchObject({ code: 'invalid_request' });
    expect(missing.json<{ message: string }>().message).toContain("must have required property 'name'");
    await app.close();
  });

  it('answers bad JSON with 400 invalid_request', async () => {
    const app = await buildApp();
    const response = await app.inject({
      method: 'POST',
      url: '/echo',
      headers: { 'content-type': 'application/json', 'accept-language': 'fr-FR' },
      payload: '{"name": ',
    });
    expect(response.statusCode).toBe(400);
    expect(response.headers['content-language']).toBe('fr');
    expect(response.json()).toMatchObject({ code: 'invalid_request', locale: 'fr' });
    await app.close();
  });

  it('answers an empty JSON body and an unsupported media type with invalid_request', async () => {
    const app = await buildApp();
    const empty = await app.inject({
      method: 'POST',
      url: '/echo',
      headers: { 'content-type': 'application/json' },
      payload: '',
    });
    expect(empty.statusCode).toBe(400);
    expect(empty.json()).toMatchObject({ code: 'invalid_request' });

    const media = await app.inject({
      method: 'POST',
      url: '/echo',
      headers: { 'content-type': 'application/x-unknown' },
      payload: 'name=x',
    });
    expect(media.statusCode).toBe(415);
    expect(media.json()).toMatchObject({ code: 'invalid_request' });
    await app.close();
  });

  it('answers a body over the limit with 413 invalid_request', async () => {
    const app = Fastify({ logger: false, bodyLimit: 16 });
    await app.register(errorsPlugin);
    app.post('/small', async () => ({ ok: true }));
    const response = await app.inject({ method: 'POST', url: '/small', payload: { name: 'x'.repeat(64) } });
    expect(response.statusCode).toBe(413);
    expect(response.json()).toMatchObject({ code: 'invalid_request' });
    await app.close();
  });

  it('answers an unexpected error with 500 internal_error, logs it, and hides its message', async () => {
    const lines: string[] = [];
    const logStream = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        lines.push(chunk.toString());
        callback();
      },
    });
    const app = await buildApp(logStream);
    const response = await app.inject({ method: 'GET', url: '/boom', headers: { 'accept-language': 'es' } });
    expect(response.statusCode).toBe(500);
    expect(response.json()).toEqual(errorBody('internal_error', 'es'));
    expect(response.body).not.toContain('hunter2');
    expect(lines.join('')).toContain('hunter2');
    await app.close();
  });

  it('answers an unknown route with 404 not_found', async () => {
    const app = await buildApp();
    const response = await app.inject({ method: 'GET', url: '/nowhere', headers: { 'accept-language': 'pt-BR' } });
    expect(response.statusCode).toBe(404);
    expect(response.headers['content-language']).toBe('pt');
    expect(response.json()).toEqual(errorBody('not_found', 'pt'));
    await app.close();
  });
});
