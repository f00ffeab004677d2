// Turns every failure of a request into the spec's error object `{code, message, locale}`
// (spec 2.1), translated into the language of the account or, failing that, of the client.
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

import { GatewayError, errorBody, resolveLocale, type ErrorCode, type ErrorParams } from '../errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The account's language, set by authentication; it wins over Accept-Language. */
    accountLocale?: string;
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
  const issue: unknown = error.validation[0];
  if (typeof issue !== 'object' || issue === null) return undefined;
  const context = typeof error.validationContext === 'string' ? error.validationContext : '';
  const path = 'instancePath' in issue && typeof issue.instancePath === 'string' ? issue.instancePath : '';
  const message = 'message' in issue && typeof issue.message === 'string' ? issue.message : '';
  return `${context}${path} ${message}`.trim() || undefined;
}

/**
 * Fastify's own errors about a malformed request (bad or empty JSON body, unsupported media type,
 * body too large, ...). Their messages are fixed texts that describe the client's mistake.
 */
function isFastifyClientError(error: unknown): error is Error & { code: string; statusCode: number } {
  return (
    error instanceof Error &&
    'code' in error &&
    typeof error.code === 'string' &&
    error.code.startsWith('FST_') &&
    'statusCode' in error &&
    typeof error.statusCode === 'number' &&
    error.statusCode >= 400 &&
    error.statusCode < 500
  );
}

function answerFor(error: unknown): ErrorAnswer {
  if (error instanceof GatewayError) {
    // instanceof narrows to GatewayError<any>; name the catalogue-wide type again.
    const failure: GatewayError = error as GatewayError;
    return { code: failure.code, status: failure.statusCode, params: failure.params, headers: failure.headers };
  }
  if (isValidationError(error)) {
    return { code: 'invalid_request', status: 400, params: { detail: firstValidationDetail(error) } };
  }
  if (isFastifyClientError(error)) {
    return { code: 'invalid_request', status: error.statusCode, params: { detail: error.message } };
  }
  return { code: 'internal_error', status: 500 };
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
    const answer = answerFor(error);
    if (answer.status >= 500) {
      // Only the log sees the original error; the client gets the catalogue's message.
      request.log.error({ err: error }, `request failed with ${answer.code}`);
    }
    return sendError(request, reply, answer);
  });

  app.setNotFoundHandler((request, reply) => sendError(request, reply, { code: 'not_found', status: 404 }));
}

export const errorsPlugin = fp(gatewayErrors, { name: 'gateway-errors', fastify: '5.x' });
export default errorsPlugin;
