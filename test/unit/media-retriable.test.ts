import { describe, expect, it } from 'vitest';
import { OutboundHttpError, toOutboundHttpError } from '../../shared/http/errors.js';
import { OUTBOUND_FAILURES, retriableStatus } from '../../shared/http/retriable.js';

describe('retriable table', () => {
  it.each([408, 429, 500, 502, 503, 504, 599])('retries status %i', (status) => {
    expect(retriableStatus(status)).toBe(true);
  });

  it.each([300, 304, 400, 401, 403, 404, 409, 410, 413, 422])('does not retry status %i', (status) => {
    expect(retriableStatus(status)).toBe(false);
  });

  it('retries transport failures and timeouts, not refusals of the request itself', () => {
    expect(OUTBOUND_FAILURES).toEqual({
      blocked_address: false,
      invalid_url: false,
      too_many_redirects: false,
      too_large: false,
      timeout: true,
      network: true,
    });
  });

  it('gives each error the flag of its kind or status', () => {
    expect(OutboundHttpError.status(503, 'a.test')).toMatchObject({ kind: 'status', status: 503, retryable: true });
    expect(OutboundHttpError.status(404, 'a.test')).toMatchObject({ kind: 'status', status: 404, retryable: false });
    expect(OutboundHttpError.of('too_large', 'big')).toMatchObject({ retryable: false });
  });

  it('names what undici and the socket throw', () => {
    const coded = (code: string) => Object.assign(new Error(code), { code });
    expect(toOutboundHttpError(coded('UND_ERR_CONNECT_TIMEOUT'), 'a.test')).toMatchObject({ kind: 'timeout', retryable: true });
    expect(toOutboundHttpError(coded('UND_ERR_HEADERS_TIMEOUT'), 'a.test')).toMatchObject({ kind: 'timeout' });
    expect(toOutboundHttpError(coded('UND_ERR_BODY_TIMEOUT'), 'a.test')).toMatchObject({ kind: 'timeout' });
    expect(toOutboundHttpError(new DOMException('deadline', 'TimeoutError'), 'a.test')).toMatchObject({ kind: 'timeout' });
    expect(toOutboundHttpError(coded('ECONNREFUSED'), 'a.test')).toMatchObject({ kind: 'network', retryable: true });
    expect(toOutboundHttpError(coded('ENOTFOUND'), 'a.test')).toMatchObject({ kind: 'network' });
    expect(toOutboundHttpError(coded('UND_ERR_INVALID_ARG'), 'a.test')).toMatchObject({ kind: 'invalid_url', retryable: false });
    const original = OutboundHttpError.of('blocked_address', 'no');
    expect(toOutboundHttpError(original, 'a.test')).toBe(original);
  });
});
