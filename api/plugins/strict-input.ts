// What every request must be before a handler sees it, whatever its route: a JSON body in UTF-8,
// sent as it is (no content-encoding) and nested no deeper than MAX_JSON_DEPTH, and text that
// can be stored everywhere (storable-text.ts).
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { gatewayError } from '../errors.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../json-depth.js';
import { findUnstorableText } from '../storable-text.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Fields (`body/rows`) whose strings the handler checks itself, to answer per item rather than refuse the request. */
    textCheckedByHandler?: readonly string[];
  }
}

function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** The charset parameter of a content-type, lower-cased and unquoted. */
function charsetOf(contentType: string): string | undefined {
  for (const parameter of contentType.split(';').slice(1)) {
    const [name = '', value = ''] = parameter.split('=');
    if (name.trim().toLowerCase() === 'charset') return value.trim().replace(/^"|"$/g, '').toLowerCase();
  }
  return undefined;
}

/**
 * Fastify decodes every JSON body as UTF-8 and ignores content-encoding: a body declared in
 * another charset or compressed would be read as something it is not. Both are refused (415).
 */
function refuseUnreadableBody(request: FastifyRequest): void {
  if (!hasBody(request)) return;
  const encoding = request.headers['content-encoding']?.trim().toLowerCase();
  if (encoding !== undefined && encoding !== '' && encoding !== 'identity') {
    throw gatewayError('invalid_request', { detail: `content-encoding ${encoding} is not accepted; send the body uncompressed` }, { status: 415 });
  }
  const charset = charsetOf(request.headers['content-type'] ?? '');
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    throw gatewayError('invalid_request', { detail: `charset ${charset} is not accepted; send UTF-8` }, { status: 415 });
  }
}

/** Fastify's query parser keeps a malformed escape (`%ED%A0%80`, `%C3%28`) as literal text; it is refused instead. */
function queryDecodes(url: string): boolean {
  const start = url.indexOf('?');
  if (start === -1) return true;
  try {
    decodeURIComponent(url.slice(start + 1));
    return true;
  } catch {
    return false;
  }
}

/**
 * The text rule, once for every route: params, querystring and body are walked before schema
 * validation, so no id or query value with a NUL reaches a database, a header or a log.
 */
function refuseUnstorableText(request: FastifyRequest): void {
  if (!queryDecodes(request.url)) throw gatewayError('invalid_request', { detail: 'the querystring is not valid percent-encoded UTF-8' });
  const skip = new Set(request.routeOptions.config.textCheckedByHandler ?? []);
  const found =
    findUnstorableText(request.params, 'params') ??
    findUnstorableText(request.query, 'querystring') ??
    findUnstorableText(request.body, 'body', skip);
  if (found !== undefined) throw gatewayError('invalid_request', { detail: `${found.field} ${found.problem}` });
}

/**
 * A route that declares no body takes none. Fields sent to one (a `secret` to rotate-secret) were
 * ignored without a word, where every route with a body refuses the fields it does not know. An
 * empty object, which many clients send with any POST, passes; so do the bodies a route parses
 * itself (a signed payment webhook's bytes) and multipart uploads, which are not JSON values here.
 */
function refuseUndeclaredBody(request: FastifyRequest): void {
  const { body } = request;
  // An unknown route (no url) answers 404 whatever it was sent.
  if (request.routeOptions.url === undefined || request.routeOptions.schema?.body !== undefined || body === undefined || Buffer.isBuffer(body)) return;
  if (body !== null && typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0) return;
  throw gatewayError('invalid_request', { detail: 'this route takes no body: send none, or {}' });
}

/**
 * Fastify's own JSON parser (prototype poisoning refused), behind a check of the text's nesting:
 * a body deeper than MAX_JSON_DEPTH is refused before it is parsed, so nothing walks it.
 */
function depthCheckedJsonParser(app: FastifyInstance) {
  const parse = app.getDefaultJsonParser('error', 'error');
  return (request: FastifyRequest, body: string, done: (error: Error | null, body?: unknown) => void): void => {
    if (nestsDeeperThan(body, MAX_JSON_DEPTH)) {
      done(gatewayError('invalid_request', { detail: `the body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep` }));
      return;
    }
    // It answers through `done`; its declared type allows a promise it never returns.
    void parse(request, body, done);
  };
}

async function strictInput(app: FastifyInstance): Promise<void> {
  // Only JSON bodies are read; Fastify's text/plain parser would hand a string to JSON schemas.
  app.removeContentTypeParser('text/plain');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, depthCheckedJsonParser(app));
  app.addHook('preParsing', async (request) => refuseUnreadableBody(request));
  app.addHook('preValidation', async (request) => {
    refuseUndeclaredBody(request);
    refuseUnstorableText(request);
  });
}

export const strictInputPlugin = fp(strictInput, { name: 'gateway-strict-input', fastify: '5.x', dependencies: ['gateway-errors'] });
