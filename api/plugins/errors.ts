// Turns every failure of a request into the spec's error object `{code, message, locale}`
// (spec 2.1), translated into the language of the account or, failing that, of the client.
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { DeadlineExceeded } from '../../shared/deadline.js';
import { PaymentRefused } from '../../connectors/payments/provider.js';
import { ConnectionRefused } from '../../processors/connections/writer.js';
import { ConfigRefused } from '../../processors/config/refused.js';
import { SendRefused } from '../../processors/sends/refused.js';
import { CampaignRefused } from '../../processors/campaigns/refused.js';
import { DEFAULT_LOCALE, GatewayError, errorBody, resolveLocale, statusOf, type ErrorCode, type ErrorParams } from '../errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The account's language, set by authentication; it wins over Accept-Language. */
    accountLocale?: string;
  }
  interface FastifyContextConfig {
    /** The body carries media (base64): over its limit it is `media_too_large`, not `invalid_request`. */
    mediaBody?: boolean;
  }
}

interface ErrorAnswer {
  code: ErrorCode;
  status: number;
  params?: ErrorParams;
  headers?: Readonly<Record<string, string>>;
}

type ValidationError = Error & { validation: readonly unknown[]; validationContext?: unknown };

function isValidationError(error: unknown): error is ValidationError {
  return error instanceof Error && 'validation' in error && Array.isArray(error.validation);
}

/** Fastify's format for a schema failure, e.g. `body/name must be string`. */
function firstValidationDetail(error: ValidationError): string | undefined {
  const issues = error.validation.filter((issue): issue is ValidationIssue => typeof issue === 'object' && issue !== null);
  const issue = issues[0];
  if (issue === undefined) return undefined;
  const context = typeof error.validationContext === 'string' ? error.validationContext : '';
  const path = typeof issue.instancePath === 'string' ? issue.instancePath : '';
  return `${context}${path} ${typesExpected(issues, path) ?? issue.message ?? ''}`.trim() || undefined;
}

interface ValidationIssue {
  readonly instancePath?: unknown;
  readonly keyword?: unknown;
  readonly message?: string;
  readonly params?: { readonly type?: unknown };
}

/**
 * For a value that matches no branch of a union (`string` or `null`), AJV's first issue names one
 * branch only ("must be null"): name every type the field takes instead.
 */
function typesExpected(issues: readonly ValidationIssue[], path: string): string | undefined {
  if (!issues.some((i) => i.keyword === 'anyOf' && i.instancePath === path)) return undefined;
  const types = issues.flatMap((i) => (i.keyword === 'type' && i.instancePath === path && typeof i.params?.type === 'string' ? [i.params.type] : []));
  return types.length > 1 ? `must be ${[...new Set(types)].join(' or ')}` : undefined;
}

/** Fastify's limit on one path parameter (find-my-way's `maxParamLength`, left at its default). */
export const MAX_PARAM_LENGTH = 100;

/**
 * A request error raised by Fastify or its parsers rather than by the gateway: an `FST_*` code or
 * a 4xx status (the JSON parser's SyntaxError carries 400).
 */
function frameworkFailure(error: unknown): { code: string; status: number; message: string } | undefined {
  if (!(error instanceof Error)) return undefined;
  const code = 'code' in error && typeof error.code === 'string' ? error.code : '';
  const status = 'statusCode' in error && typeof error.statusCode === 'number' ? error.statusCode : 500;
  if (!code.startsWith('FST_') && (status < 400 || status >= 500)) return undefined;
  return { code, status, message: error.message };
}

/** A body over the route's limit: media routes answer the spec's media_too_large (8.3). */
function bodyTooLarge(request: FastifyRequest): ErrorAnswer {
  const limit = request.routeOptions.bodyLimit;
  if (request.routeOptions.config.mediaBody === true) {
    return { code: 'media_too_large', status: 413, params: limit === undefined ? {} : { limit: `${limit} bytes` } };
  }
  return { code: 'invalid_request', status: 413, params: { detail: `the body is larger than ${limit ?? 'the limit of'} bytes` } };
}

/**
 * Every failure as a catalogue code, a status and a detail naming what was wrong; framework codes
 * (`FST_*`) never reach the body.
 */
function answerFor(error: unknown, request: FastifyRequest): ErrorAnswer {
  if (error instanceof GatewayError) {
    // instanceof narrows to GatewayError<any>; name the catalogue-wide type again.
    const failure: GatewayError = error as GatewayError;
    return { code: failure.code, status: failure.statusCode, params: failure.params, headers: failure.headers };
  }
  if (error instanceof ConnectionRefused || error instanceof PaymentRefused || error instanceof SendRefused) return { code: error.code, status: statusOf(error.code) };
  if (error instanceof CampaignRefused) return { code: error.code, status: statusOf(error.code), params: error.params };
  if (error instanceof ConfigRefused) return { code: error.code, status: statusOf(error.code), params: error.detail === undefined ? undefined : { detail: error.detail } };
  // A dependency (the log, the directory) did not answer in time.
  if (error instanceof DeadlineExceeded) return { code: 'service_unavailable', status: 503 };
  if (isValidationError(error)) {
    return { code: 'invalid_request', status: 400, params: { detail: firstValidationDetail(error) } };
  }
  const failure = frameworkFailure(error);
  if (failure === undefined || failure.status >= 500) return { code: 'internal_error', status: 500 };
  const invalid = (status: number, detail: string): ErrorAnswer => ({ code: 'invalid_request', status, params: { detail } });
  switch (failure.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return bodyTooLarge(request);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return invalid(415, `content-type ${request.headers['content-type'] ?? '(none)'} is not accepted; send application/json; charset=utf-8`);
    case 'FST_ERR_BAD_URL':
      return invalid(400, 'the path is not valid percent-encoded UTF-8');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return invalid(414, `a path parameter is longer than ${MAX_PARAM_LENGTH} characters`);
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return invalid(400, 'the body is empty; send a JSON object or no content-type');
    default:
      return invalid(failure.status, error instanceof SyntaxError ? 'the body is not valid JSON' : failure.message);
  }
}

function sendError(request: FastifyRequest, reply: FastifyReply, answer: ErrorAnswer): FastifyReply {
  const locale = resolveLocale(request.accountLocale, request.headers['accept-language']);
  const body = errorBody(answer.code, locale, answer.params);
  if (answer.headers !== undefined) reply.headers(answer.headers);
  return reply
    .code(answer.status)
    // The route may have set another type before it failed.
    .type('application/json; charset=utf-8')
    .header('content-language', body.locale)
    .send(body);
}

async function gatewayErrors(app: FastifyInstance): Promise<void> {
  app.decorateRequest('accountLocale', undefined);

  app.setErrorHandler((error, request, reply) => {
    const answer = answerFor(error, request);
    if (answer.status >= 500) {
      // Only the log sees the original error; the client gets the catalogue's message.
      request.log.error({ err: error }, `request failed with ${answer.code}`);
    }
    return sendError(request, reply, answer);
  });

  app.setNotFoundHandler((request, reply) => sendError(request, reply, { code: 'not_found', status: 404 }));
}

/**
 * Fastify's `frameworkErrors`: a URL it cannot decode or a path parameter over its length is
 * answered before routing, by this, instead of Fastify's own body.
 */
export function answerFrameworkError(error: Error, request: FastifyRequest, reply: FastifyReply): void {
  void sendError(request, reply, answerFor(error, request));
}

const RAW_STATUS: Readonly<Record<string, [number, string]>> = {
  HPE_HEADER_OVERFLOW: [431, 'the request headers are too large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'the request took too long to arrive'],
};

/**
 * Fastify's `clientErrorHandler`: a request Node's HTTP parser refuses (malformed request line,
 * headers too large) never reaches Fastify; it still gets the error object, in English.
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (!socket.writable) return;
  const [status, detail] = RAW_STATUS[error.code ?? ''] ?? [400, 'the request is not valid HTTP'];
  const body = JSON.stringify(errorBody('invalid_request', DEFAULT_LOCALE, { detail }));
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Bad Request'}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Language: ${DEFAULT_LOCALE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

export const errorsPlugin = fp(gatewayErrors, { name: 'gateway-errors', fastify: '5.x' });
export default errorsPlugin;
